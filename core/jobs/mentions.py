"""Finding mentions in raw text for the front ends (`link --detect`, the desk's "find mentions"): which
detector a project uses (the span model in force, else its dictionary), storing what it finds, and the
document lists a detection is limited to, with why documents were left out."""

from __future__ import annotations

from core.detect.into_project import detect_into_project
from core.detect.targets import (
    SKIP_GOLD,
    SKIP_HAS_MENTIONS,
    SKIP_OTHER_SPLIT,
    read_id_file,
    require_known_ids,
)
from core.project_detector import ChosenDetector, detector_for_project

__all__ = [
    "SKIP_GOLD",
    "SKIP_HAS_MENTIONS",
    "SKIP_OTHER_SPLIT",
    "ChosenDetector",
    "detect_into_project",
    "detector_for_project",
    "read_id_file",
    "require_known_ids",
]
