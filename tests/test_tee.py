"""`ascend-doctor - --tee`: the piped log reaches stdout unchanged and as it arrives; the report
goes to stderr. Real processes: a fake job writing into a real pipe."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import FIXTURES, REPO
from tests.processes import COMMAND

JOB = (sys.executable, str(REPO / "tests" / "fake_job.py"))
FIXTURE = FIXTURES / "example-train.log"


def _piped(job_steps: list[str], *args: str) -> tuple[subprocess.Popen[bytes], subprocess.Popen[bytes]]:
    """`fake_job STEPS | ascend-doctor ARGS`."""
    job = subprocess.Popen([*JOB, *job_steps], stdout=subprocess.PIPE)
    doctor = subprocess.Popen(
        [*COMMAND, *args], stdin=job.stdout, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert job.stdout is not None
    job.stdout.close()
    return job, doctor


def test_the_piped_log_reaches_stdout_byte_for_byte_and_the_report_stderr() -> None:
    job, doctor = _piped([f"cat:{FIXTURE}"], "-", "--tee", "--format", "json")
    out, err = doctor.communicate(timeout=120)
    job.wait()
    assert out == FIXTURE.read_bytes()
    report = json.loads(err)
    assert report["findings"][0]["rule_id"] == "memory.npu-out-of-memory"
    assert doctor.returncode == 1


def test_each_line_is_shown_before_the_job_writes_the_next(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    job, doctor = _piped(
        ["out:epoch 1 loss 2.5", f"gate:{gate}", "out:epoch 2 loss 1.9"], "diagnose", "-", "--tee"
    )
    assert doctor.stdout is not None
    first = doctor.stdout.readline()  # the job is waiting at the gate: the line came through live
    gate.touch()
    rest, err = doctor.communicate(timeout=120)
    job.wait()
    assert first + rest == b"epoch 1 loss 2.5\nepoch 2 loss 1.9\n"
    assert b"No known Ascend failure cause found" in err
    assert doctor.returncode == 0


def test_input_the_scan_gives_up_on_is_still_passed_through_whole() -> None:
    data = b"\x1f\x8b" + bytes(range(256)) * 4096  # gzip's magic, then no gzip: the scan stops at once
    doctor = subprocess.run([*COMMAND, "-", "--tee"], input=data, capture_output=True, timeout=120)
    assert doctor.stdout == data
    assert b"cannot read <stdin>" in doctor.stderr
    assert doctor.returncode == 2


def test_tee_without_stdin_is_a_usage_error() -> None:
    done = subprocess.run(
        [*COMMAND, str(FIXTURE), "--tee"],
        capture_output=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert done.returncode == 2
    assert done.stdout == b""
    assert b"--tee copies standard input" in done.stderr
