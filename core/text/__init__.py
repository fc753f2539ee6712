"""Text helpers shared by every room: normalisation, sentences, abbreviations."""
