"""Linking: suggestions stored for documents, finding mentions, batch runs, and the linker in a child
process."""
