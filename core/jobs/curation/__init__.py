"""Curation: decide, bulk accept, adjudicate, annotate every occurrence, learnt synonyms and their
vetoes, and the one undo history over them all."""
