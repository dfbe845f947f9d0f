"""The progress bar: drawn on a terminal's stderr while a large input is read, never in the report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ascend_doctor.read.progress import SHOW_ABOVE_BYTES
from tests.processes import run_on_terminal

pytestmark = pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")

LINE = b"[rank3] step 120: loss 2.31, lr 1e-4, tokens/s 4096, grad norm 0.84\n"
FAILURE = b"EL0004: Failed to allocate memory\n"


def _run_with_terminal_stderr(args: list[str], stdin: bytes | None = None) -> tuple[bytes, str]:
    """(stdout through a pipe, what stderr's terminal showed)."""
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "100"}
    env.pop("NO_COLOR", None)
    report, shown = run_on_terminal(args, "stderr", env, stdin)
    return report, shown.decode("utf-8", "replace")


def _plain_stdout(args: list[str]) -> bytes:
    return subprocess.run([sys.executable, "-m", "ascend_doctor", *args], capture_output=True).stdout


def test_a_large_log_shows_progress_on_the_terminal_and_not_in_the_piped_report(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_bytes(LINE * (SHOW_ABOVE_BYTES // len(LINE) + 1000) + FAILURE)
    report, terminal = _run_with_terminal_stderr([str(log)])
    assert "scanning" in terminal
    assert report == _plain_stdout([str(log)])
    assert b"scanning" not in report and b"\x1b" not in report


def test_progress_shows_whatever_the_report_format(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_bytes(LINE * (SHOW_ABOVE_BYTES // len(LINE) + 1000) + FAILURE)
    report, terminal = _run_with_terminal_stderr([str(log), "--format", "json"])
    assert "scanning" in terminal
    assert json.loads(report)["findings"][0]["rule_id"] == "memory.el0004-alloc-failed"


def test_a_directory_is_sized_by_its_files(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    each = SHOW_ABOVE_BYTES // 4 + 1
    for rank in range(4):
        (logs / f"rank{rank}.log").write_bytes(LINE * (each // len(LINE) + 1) + FAILURE)
    _, terminal = _run_with_terminal_stderr([str(logs), "--jobs", "1"])
    assert "scanning" in terminal


def test_a_small_log_shows_no_progress(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_bytes(LINE * 1000 + FAILURE)
    report, terminal = _run_with_terminal_stderr([str(log)])
    assert terminal == ""
    assert b"EL0004" in report


def test_a_short_pipe_shows_no_progress_and_a_long_one_does() -> None:
    _, terminal = _run_with_terminal_stderr(["-"], stdin=LINE * 1000 + FAILURE)
    assert terminal == ""
    _, terminal = _run_with_terminal_stderr(
        ["-"], stdin=LINE * (SHOW_ABOVE_BYTES // len(LINE) + 1000) + FAILURE
    )
    assert "scanning" in terminal
