"""Renderers by format name; `--format` choices come from RENDERERS.

A renderer's module is imported only when its format is asked for: `rich`, XML and hashing
would otherwise add tens of milliseconds to every run's start-up.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import Any

_CLASSES = {
    "text": ("text", "TextRenderer"),
    "json": ("json", "JsonRenderer"),
    "markdown": ("markdown", "MarkdownRenderer"),
    "sarif": ("sarif", "SarifRenderer"),
    "github": ("github", "GithubRenderer"),
    "gitlab": ("gitlab", "GitlabRenderer"),
    "junit": ("junit", "JunitRenderer"),
}


class _Renderers(Mapping[str, Any]):
    """Format name -> renderer class, imported on first lookup."""

    def __getitem__(self, name: str) -> Any:
        module, cls = _CLASSES[name]
        return getattr(importlib.import_module(f"ascend_doctor.render.{module}"), cls)

    def __iter__(self) -> Iterator[str]:
        return iter(_CLASSES)

    def __len__(self) -> int:
        return len(_CLASSES)


RENDERERS: Mapping[str, Any] = _Renderers()
