"""Peak memory of this process image, for benchmark figures.

VmHWM is reset by exec; ru_maxrss is not (Linux carries it across exec), so a child started from a
large parent (a test runner) would otherwise report the parent's peak as its own.
"""

from __future__ import annotations

import resource
import sys
from pathlib import Path


def peak_rss_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024, 1)
