"""Every format through the CLI: -o, --exit-zero, --fail-on; and the GitHub Actions extras of text."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ascend_doctor.render import RENDERERS
from tests.conftest import run_cli

OOM_LOG = "step 10 loss 2.3\nEL0004: Failed to allocate memory. ::add-mask::secret\n"


@pytest.fixture()
def log(tmp_path: Path) -> Path:
    path = tmp_path / "train.log"
    path.write_text(OOM_LOG, encoding="utf-8")
    return path


@pytest.mark.parametrize("fmt", sorted(RENDERERS))
def test_output_file_and_exit_codes(fmt: str, log: Path, tmp_path: Path) -> None:
    out = tmp_path / f"report.{fmt}"
    result = run_cli("diagnose", "-f", fmt, "-o", str(out), str(log))
    assert (result.exit_code, result.stdout) == (1, "")
    assert "memory.el0004-alloc-failed" in out.read_text(encoding="utf-8")
    assert run_cli("diagnose", "-f", fmt, "--exit-zero", str(log)).exit_code == 0
    assert run_cli("diagnose", "-f", fmt, "--fail-on", "never", str(log)).exit_code == 0
    assert run_cli("diagnose", "-f", fmt, "--fail-on", "error", str(log)).exit_code == 1


@pytest.mark.parametrize("fmt", sorted(RENDERERS))
def test_a_healthy_log_exits_0_in_every_format(fmt: str, tmp_path: Path) -> None:
    healthy = tmp_path / "ok.log"
    healthy.write_text("epoch 1 loss 0.5\ntraining finished\n", encoding="utf-8")
    result = run_cli("diagnose", "-f", fmt, str(healthy))
    assert result.exit_code == 0 and result.stdout


def test_in_github_actions_text_also_annotates_and_writes_the_summary(log: Path, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("# Earlier step output\n", encoding="utf-8")
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    result = run_cli("diagnose", str(log), env=env)
    assert result.exit_code == 1
    text, _, commands = result.stdout.partition("\n::error ")
    assert "Diagnosis:" in text and commands, result.stdout
    assert "::stop-commands::" in commands
    written = summary.read_text(encoding="utf-8")
    assert written.startswith("# Earlier step output\n## ascend-doctor: ")
    assert "```text\n" in written and "### Inputs" in written


def test_outside_github_actions_text_has_no_annotations(log: Path, tmp_path: Path) -> None:
    result = run_cli("diagnose", str(log))
    assert "::error" not in result.stdout and "::stop-commands::" not in result.stdout


def test_machine_formats_stay_pure_in_github_actions(log: Path, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    result = run_cli("diagnose", "-f", "json", str(log), env=env)
    assert json.loads(result.stdout)["findings"]
    assert not summary.exists()


def test_the_summary_file_stays_under_1_mib(tmp_path: Path) -> None:
    """Earlier output of the same step leaves little room: evidence is cut first, and it says so."""
    logs = tmp_path / "logs"
    logs.mkdir()
    line = "EL0004: Failed to allocate memory. " + "x" * 900 + "\n"
    for rank in range(40):
        (logs / f"rank{rank}.log").write_text(line * 20, encoding="utf-8")
    summary = tmp_path / "summary.md"
    summary.write_text("x" * (1024 * 1024 - 6000) + "\n", encoding="utf-8")
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    assert run_cli("diagnose", str(logs), env=env).exit_code == 1
    written = summary.read_text(encoding="utf-8")
    assert len(written.encode()) <= 1024 * 1024
    assert "## ascend-doctor: " in written and "Evidence was shortened" in written


def test_an_unwritable_summary_is_a_warning_not_a_failure(log: Path, tmp_path: Path) -> None:
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(tmp_path / "no" / "such" / "dir.md")}
    result = run_cli("diagnose", str(log), env=env)
    assert result.exit_code == 1
    assert "cannot write the job summary" in result.stderr


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ((), r"::error title=[^:]+ \(stdin%2C line 2\)::"),
        (("--stdin-name", "train.log"), "::error file=train.log,line=2,title="),
    ],
    ids=["unnamed", "named"],
)
def test_annotations_of_piped_input_say_stdin_or_the_given_name(name: tuple[str, ...], expected: str) -> None:
    result = run_cli("diagnose", "-f", "github", *name, "-", stdin=OOM_LOG)
    assert result.exit_code == 1
    annotation = result.stdout.splitlines()[0]
    assert re.match(expected, annotation), annotation
    assert "<stdin>" not in annotation
