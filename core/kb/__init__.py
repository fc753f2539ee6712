"""Knowledge bases: concepts, identifiers and one streaming loader per vocabulary format."""

from core.kb.concept import Concept

__all__ = ["Concept"]
