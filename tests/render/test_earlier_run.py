"""A finding only an earlier run's logs showed is marked as such in every format."""

from __future__ import annotations

import pytest

from ascend_doctor.render import RENDERERS
from tests.render.sample import OOM, render, sample_report

THREE_DAYS = 3 * 86400 + 5 * 3600


def _with_an_earlier_run(lang: str):  # type: ignore[no-untyped-def]
    report = sample_report(lang)
    old = report.findings[0]._replace(earlier_run=float(THREE_DAYS))
    return report._replace(findings=(old, *report.findings[1:]))


@pytest.mark.parametrize("fmt", sorted(RENDERERS))
def test_every_format_says_earlier_run_and_how_long_before(fmt: str) -> None:
    output = render(fmt, _with_an_earlier_run("en"))
    assert "earlier run, 3 days before" in output
    assert "earlier run" not in render(fmt, sample_report("en"))


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_in_chinese_the_mark_is_chinese_with_full_width_brackets(fmt: str) -> None:
    output = render(fmt, _with_an_earlier_run("zh"))
    assert f"{OOM.title.zh}（更早的一次运行，3 天前）" in output
