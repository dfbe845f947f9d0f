"""Versions and environment for a `collect` bundle: what a vendor asks first.

A small snapshot of its own: Python, platform, the framework packages' versions (read from their
metadata, never imported), the CANN and driver version files, and the job's environment variables.
When `ascend-doctor check` exists, its report is the richer source and belongs here instead.
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from ascend_doctor import __version__

PACKAGES = ("torch", "torch_npu", "mindspore", "deepspeed", "vllm", "vllm_ascend", "transformers", "numpy")
VERSION_FILES = (
    "/usr/local/Ascend/ascend-toolkit/latest/version.cfg",
    "/usr/local/Ascend/ascend-toolkit/latest/compiler/version.info",
    "/usr/local/Ascend/driver/version.info",
    "/usr/local/Ascend/firmware/version.info",
)
MAX_VERSION_FILE = 4096


def _package_versions() -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def _version_files() -> dict[str, str]:
    found = {}
    for name in VERSION_FILES:
        try:
            found[name] = Path(name).read_text(encoding="utf-8", errors="replace")[:MAX_VERSION_FILE]
        except OSError:
            continue
    return found


def snapshot(variables: Mapping[str, str]) -> dict[str, Any]:
    """The versions and the given environment variables (redact them before writing)."""
    return {
        "ascend_doctor": __version__,
        "python": sys.version,
        "platform": platform.platform(),
        "packages": _package_versions(),
        "version_files": _version_files(),
        "environment": dict(variables),
    }
