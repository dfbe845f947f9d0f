"""The CANN logs a job wrote while `run` watched it."""

from __future__ import annotations

import os
from collections.abc import Sequence

from ascend_doctor.read.sources import expand

# A file system may keep modification times in whole seconds: a plog written in the second the
# command started may carry a time just before it.
CLOCK_SLACK = 1.0


def written_since(start: float, places: Sequence[str]) -> list[str]:
    """The files under `places` modified at `start` or later, in the order a walk finds them."""
    found = []
    for item in expand(places):
        if item.skip_reason:
            continue
        try:
            modified = os.stat(item.path).st_mtime
        except OSError:
            continue
        if modified >= start - CLOCK_SLACK:
            found.append(item.path)
    return found
