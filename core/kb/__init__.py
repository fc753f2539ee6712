"""Knowledge bases: concepts, identifiers and one streaming loader per vocabulary format."""

from core.kb.concept import Concept
from core.kb.registry import KB_FORMATS, load_kb
from core.kb.sniff import sniff_kb_format

__all__ = ["KB_FORMATS", "Concept", "load_kb", "sniff_kb_format"]
