"""`ascend-doctor run -- CMD`, with real child processes: a fake job (tests/fake_job.py) that prints,
waits, writes a plog, and exits with a status or dies of a signal."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES, REPO
from tests.processes import COMMAND, group_members, start, wait_until

JOB = (sys.executable, str(REPO / "tests" / "fake_job.py"))
OOM_LOG = FIXTURES / "example-train.log"
OOM_RULE = "memory.npu-out-of-memory"


@pytest.fixture
def plog_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty CANN log place of the test's own, for the job and for `run`."""
    place = tmp_path / "ascend-log"
    place.mkdir()
    monkeypatch.setenv("ASCEND_PROCESS_LOG_PATH", str(place))
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "ASCEND_DOCTOR_FORMAT", "ASCEND_DOCTOR_FAIL_ON"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    return place


def run(
    *args: str, steps: list[str], env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """`ascend-doctor run ARGS -- fake_job STEPS`."""
    command = [*COMMAND, "run", *args, "--", *JOB, *steps]
    return subprocess.run(command, capture_output=True, timeout=120, env={**os.environ, **(env or {})})


def findings(report: dict[str, Any]) -> list[tuple[str, list[tuple[str, int, str]]]]:
    return [
        (item["rule_id"], [(line["path"], line["line"], line["text"]) for line in item["evidence"]])
        for item in report["findings"]
    ]


def test_findings_are_those_of_diagnose_on_the_same_bytes(plog_dir: Path, tmp_path: Path) -> None:
    log, report = tmp_path / "job.log", tmp_path / "run.json"
    done = run("--log", str(log), "-f", "json", "-o", str(report), steps=[f"cat:{OOM_LOG}", "exit:1"])
    assert done.returncode == 1
    assert done.stdout == OOM_LOG.read_bytes()
    assert log.read_bytes() == OOM_LOG.read_bytes()
    diagnosed = subprocess.run([*COMMAND, str(log), "-f", "json"], capture_output=True, timeout=120)
    expected = findings(json.loads(diagnosed.stdout))
    assert expected[0][0] == OOM_RULE
    assert findings(json.loads(report.read_text())) == expected


def test_each_stream_is_passed_through_exactly_and_live(plog_dir: Path, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    steps = [
        "out:step 1 loss 2.5",
        "err:warn: slow step",
        f"gate:{gate}",
        "raw:1b5b33316d726564",
        "out:",
        "exit:0",
    ]
    doctor = start(["run", "--", *JOB, *steps])
    assert doctor.stdout is not None and doctor.stderr is not None
    first_out = doctor.stdout.readline()
    first_err = doctor.stderr.readline()  # both came while the job waits at the gate
    gate.touch()
    rest_out, rest_err = doctor.communicate(timeout=120)
    assert first_out + rest_out == b"step 1 loss 2.5\n\x1b[31mred\n"  # colour codes kept
    assert first_err == b"warn: slow step\n"
    assert rest_err.startswith(b"ascend-doctor: `")
    assert b"exited with 0; no failure found" in rest_err
    assert rest_err.count(b"\n") == 1  # one line, no report
    assert doctor.returncode == 0


def test_when_our_stdout_is_closed_the_job_sees_a_closed_pipe_as_it_would_in_one(plog_dir: Path) -> None:
    doctor = start(["run", "--", *JOB, "yes:loss 2.5"])  # `ascend-doctor run -- yes | head -1`
    assert doctor.stdout is not None and doctor.stderr is not None
    assert doctor.stdout.readline() == b"loss 2.5\n"
    doctor.stdout.close()
    err = doctor.stderr.read()
    assert doctor.wait(timeout=60) == 1  # the job's own status: Python exits 1 on a broken pipe
    assert b"BrokenPipeError" in err and b"exited with 1" in err


def test_the_scan_gets_whole_lines_when_the_streams_interleave(plog_dir: Path, tmp_path: Path) -> None:
    log = tmp_path / "job.log.gz"
    done = run(
        "--log", str(log), steps=["raw:" + b"EL0004: Failed to ".hex(), "err:a stderr line", "out:allocate"]
    )
    assert done.stdout == b"EL0004: Failed to allocate\n"
    # Which stream's line comes first depends on when `run` got to read them; neither is cut.
    lines = gzip.decompress(log.read_bytes()).splitlines(keepends=True)
    assert sorted(lines) == [b"EL0004: Failed to allocate\n", b"a stderr line\n"]


@pytest.mark.parametrize(
    ("steps", "status", "said"),
    [
        (["err:RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB", "exit:1"], 1, b"exited with 1"),
        (
            ["out:EL0004: Failed to allocate memory.", "kill:SIGKILL"],
            137,
            b"was killed by SIGKILL (exit 137)",
        ),
        (
            ["out:EL0004: Failed to allocate memory.", "kill:SIGSEGV"],
            139,
            b"was killed by SIGSEGV (exit 139)",
        ),
    ],
)
def test_a_failed_command_gives_its_status_and_the_report(
    plog_dir: Path, steps: list[str], status: int, said: bytes
) -> None:
    done = run(steps=steps)
    assert done.returncode == status
    assert said in done.stderr
    assert b"allocate" in done.stderr.split(said, 1)[1].split(b"Evidence:")[1]  # the report, after the job
    assert b"Traceback" not in done.stderr


def test_exit_zero_keeps_the_report_and_changes_the_status(plog_dir: Path) -> None:
    done = run("--exit-zero", steps=["out:EL0004: Failed to allocate memory.", "exit:1"])
    assert done.returncode == 0
    assert b"exited with 1" in done.stderr and b"memory.el0004-alloc-failed" in done.stderr


def test_a_success_with_a_finding_at_fail_on_is_reported_and_keeps_its_status(plog_dir: Path) -> None:
    line = "out:EL0004: Failed to allocate memory."
    assert b"Diagnosis:" not in run("--fail-on", "never", steps=[line]).stderr
    done = run(steps=[line])
    assert done.returncode == 0
    assert b"exited with 0" in done.stderr and b"memory.el0004-alloc-failed" in done.stderr


def test_a_machine_report_is_written_after_a_success_too(plog_dir: Path, tmp_path: Path) -> None:
    report = tmp_path / "gl-code-quality.json"
    done = run("-f", "gitlab", "-o", str(report), steps=["out:epoch 1 loss 2.5"])
    assert done.returncode == 0
    assert json.loads(report.read_text()) == []


def test_plogs_written_during_the_run_are_read_and_named(plog_dir: Path, tmp_path: Path) -> None:
    old = plog_dir / "debug" / "plog" / "plog-1_20200101000000000.log"
    old.parent.mkdir(parents=True)
    old.write_text("[ERROR] HCCL(1,python):2020-01-01-00:00:00.000.000 [a.cc:1]1 EI0006: socket timeout\n")
    os.utime(old, (1_577_836_800, 1_577_836_800))  # an earlier run's
    report = tmp_path / "run.json"
    done = run("-f", "json", "-o", str(report), steps=["out:step 9 loss nan", f"plog:{plog_dir}", "exit:1"])
    assert done.returncode == 1
    data = json.loads(report.read_text())
    read = [item["path"] for item in data["inputs"]]
    assert len(read) == 2 and read[0] == "<output>"
    assert read[1].startswith(str(plog_dir / "debug" / "plog" / "plog-"))
    assert [item["rule_id"] for item in data["findings"]] == ["memory.el0004-alloc-failed"]
    assert f"read 1 CANN log file(s) written during the run: {read[1]}".encode() in done.stderr


def test_no_plogs_reads_only_the_output(plog_dir: Path, tmp_path: Path) -> None:
    report = tmp_path / "run.json"
    run("--no-plogs", "-f", "json", "-o", str(report), steps=[f"plog:{plog_dir}", "exit:1"])
    assert [item["path"] for item in json.loads(report.read_text())["inputs"]] == ["<output>"]


def _until_line(stream: Any, text: bytes) -> bytes:
    seen = b""
    while text not in seen:
        line = stream.readline()
        assert line, seen
        seen += line
    return seen


def test_ctrl_c_ends_the_job_and_the_report_of_what_it_printed_is_written(plog_dir: Path) -> None:
    doctor = start(
        ["run", "--", *JOB, "out:EL0004: Failed to allocate memory.", "out:ready", "gate:/nonexistent"]
    )
    assert doctor.stdout is not None
    _until_line(doctor.stdout, b"ready")
    doctor.send_signal(signal.SIGINT)  # what a terminal's Ctrl-C does to the foreground job: `run`
    _out, err = doctor.communicate(timeout=60)
    assert doctor.returncode == 130
    assert b"KeyboardInterrupt" in err  # the job's own dying words passed through
    assert b"was killed by SIGINT (exit 130)" in err
    assert b"memory.el0004-alloc-failed" in err


def test_sigterm_reaches_the_whole_process_group(plog_dir: Path, tmp_path: Path) -> None:
    grandchild = tmp_path / "grandchild.pid"
    steps = ["trap:SIGTERM", f"spawn:{grandchild}", "out:ready", "gate:/nonexistent"]
    doctor = start(["run", "--", *JOB, *steps])
    assert doctor.stdout is not None
    _until_line(doctor.stdout, b"ready")
    assert wait_until(lambda: grandchild.exists() and grandchild.read_text() != "")
    group = os.getpgid(int(grandchild.read_text()))  # the job's group, the grandchild in it
    doctor.send_signal(signal.SIGTERM)
    _out, err = doctor.communicate(timeout=60)
    assert doctor.returncode == 3  # the job's own status: it caught SIGTERM and exited 3
    assert err.startswith(b"caught SIGTERM\n")
    assert wait_until(lambda: group_members(group) == [])  # the grandchild got it too


def test_a_command_that_does_not_exist_exits_127(plog_dir: Path) -> None:
    done = subprocess.run(
        [*COMMAND, "run", "--", "no-such-command-xyz", "--flag"], capture_output=True, timeout=60
    )
    assert done.returncode == 127
    assert done.stderr == b"ascend-doctor: error: no-such-command-xyz: command not found\n"
    assert done.stdout == b""


def test_a_file_that_is_not_executable_exits_126(plog_dir: Path, tmp_path: Path) -> None:
    script = tmp_path / "train.sh"
    script.write_text("echo hi\n")
    done = subprocess.run([*COMMAND, "run", "--", str(script)], capture_output=True, timeout=60)
    assert done.returncode == 126
    assert done.stderr == f"ascend-doctor: error: {script}: permission denied\n".encode()


def test_a_broken_rule_directory_stops_before_the_command_starts(plog_dir: Path, tmp_path: Path) -> None:
    marker = tmp_path / "started"
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "bad.yaml").write_text("rules: [{id: x}]\n")
    done = run("--rules", str(tmp_path / "rules"), steps=[f"plog:{marker}"])
    assert done.returncode == 2
    assert not marker.exists()


def test_under_github_actions_the_job_log_is_untouched_and_annotated(plog_dir: Path, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    job_line = "::warning::the job's own annotation"
    done = run(env=env, steps=[f"out:{job_line}", f"cat:{OOM_LOG}", "exit:1"])
    assert done.returncode == 1
    own = f"{job_line}\n".encode() + OOM_LOG.read_bytes()
    assert done.stdout.startswith(own)  # the job's output first, unchanged, its own command included
    annotations = done.stdout[len(own) :].decode()
    assert annotations.startswith("::error file=<output>,line=45,title=")
    assert "::stop-commands::" in done.stderr.decode()  # the text report is fenced, as diagnose's is
    assert OOM_RULE in summary.read_text()
