"""Renderers by format name; `--format` choices come from RENDERERS."""

from __future__ import annotations

from typing import Any

from ascend_doctor.render.json import JsonRenderer
from ascend_doctor.render.text import TextRenderer

RENDERERS: dict[str, Any] = {
    "text": TextRenderer,
    "json": JsonRenderer,
}
