"""Mention detection for raw text: a dictionary tagger behind the `Detector` protocol."""
