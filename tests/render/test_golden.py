"""Every format renders the fixed sample report exactly as stored in tests/render/golden/.

After an intended output change, regenerate the files and review the diff:
    ASCEND_DOCTOR_REGEN_GOLDEN=1 python -m pytest tests/render/test_golden.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ascend_doctor.render import RENDERERS
from tests.render.sample import normalise_token, render, sample_report

GOLDEN = Path(__file__).parent / "golden"
FILES = {
    "text": "report.txt",
    "json": "report.json",
    "markdown": "report.md",
    "github": "report.github.txt",
    "sarif": "report.sarif",
    "gitlab": "report.gitlab.json",
    "junit": "report.junit.xml",
}


def test_every_format_has_a_golden_file() -> None:
    assert set(FILES) == set(RENDERERS)


@pytest.mark.parametrize("fmt", sorted(FILES))
def test_golden(fmt: str) -> None:
    output = normalise_token(render(fmt, sample_report()))
    path = GOLDEN / FILES[fmt]
    if os.environ.get("ASCEND_DOCTOR_REGEN_GOLDEN") == "1":
        path.write_text(output, encoding="utf-8")
    assert output == path.read_text(encoding="utf-8"), f"{path.name} differs; see the module docstring"
