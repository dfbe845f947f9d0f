"""GitLab Code Quality: the required keys, allowed severities, fingerprints unique and stable."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli
from tests.render.sample import render, sample_report

SEVERITIES = {"blocker", "critical", "major", "minor", "info"}
LOG = (
    "[rank0]: EL0004: Failed to allocate memory.\n"
    "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB\n"
    "AssertionError: daemonic processes are not allowed to have children\n"
    "EH9999: Inner Error!\n"
)


def diagnose_gitlab(*paths: Path) -> list[dict]:
    result = run_cli("diagnose", "-f", "gitlab", *map(str, paths))
    assert result.exit_code == 1, result.stderr
    return json.loads(result.stdout)


def test_issue_shape() -> None:
    issues = json.loads(render("gitlab", sample_report()))
    assert [issue["severity"] for issue in issues] == ["critical", "major", "info"]
    for issue in issues:
        assert set(issue) == {"description", "check_name", "fingerprint", "severity", "location"}
        assert issue["severity"] in SEVERITIES
        assert set(issue["location"]) == {"path", "lines"} and issue["location"]["lines"]["begin"] >= 1


def test_fingerprints_are_unique_and_stable_across_runs_and_line_shifts(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("rank0.log", "rank1.log"):
        (tmp_path / name).write_text(LOG, encoding="utf-8")
    first = diagnose_gitlab(Path("rank0.log"), Path("rank1.log"))
    fingerprints = [issue["fingerprint"] for issue in first]
    assert len(fingerprints) >= 4 and len(set(fingerprints)) == len(fingerprints)
    assert diagnose_gitlab(Path("rank0.log"), Path("rank1.log")) == first
    for name in ("rank0.log", "rank1.log"):
        (tmp_path / name).write_text("step 1 loss 2.0\nstep 2 loss 1.9\n" + LOG, encoding="utf-8")
    shifted = diagnose_gitlab(Path("rank0.log"), Path("rank1.log"))
    assert [issue["fingerprint"] for issue in shifted] == fingerprints
    assert [issue["location"]["lines"]["begin"] for issue in shifted] == [
        issue["location"]["lines"]["begin"] + 2 for issue in first
    ]
