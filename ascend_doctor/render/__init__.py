"""Renderers by format name; `--format` choices come from RENDERERS."""

from __future__ import annotations

from typing import Any

from ascend_doctor.render.github import GithubRenderer
from ascend_doctor.render.gitlab import GitlabRenderer
from ascend_doctor.render.json import JsonRenderer
from ascend_doctor.render.junit import JunitRenderer
from ascend_doctor.render.markdown import MarkdownRenderer
from ascend_doctor.render.sarif import SarifRenderer
from ascend_doctor.render.text import TextRenderer

RENDERERS: dict[str, Any] = {
    "text": TextRenderer,
    "json": JsonRenderer,
    "markdown": MarkdownRenderer,
    "sarif": SarifRenderer,
    "github": GithubRenderer,
    "gitlab": GitlabRenderer,
    "junit": JunitRenderer,
}
