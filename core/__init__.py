"""Curalink engine: everything a script, a test or a batch job needs. No Qt, no printing."""

__version__ = "0.1.0"
