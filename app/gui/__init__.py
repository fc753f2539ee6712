"""The curator's desk: a PySide6 application over `core` (which never imports Qt)."""
