"""Files, directories and plog trees: what is read, what is skipped and why, and nothing silently lost."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import diagnose_json, run_cli

OOM = "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB\n"


def inputs_by_name(report: dict) -> dict[str, dict]:
    return {Path(record["path"]).name: record for record in report["inputs"]}


def test_directory_walk_reports_every_skip_with_its_reason(tmp_path: Path) -> None:
    (tmp_path / "rank0.log").write_text(OOM)
    (tmp_path / "empty.log").write_bytes(b"")
    (tmp_path / "core.bin").write_bytes(b"\x7fELF\x00\x00\x01binary")
    (tmp_path / "dangling.log").symlink_to(tmp_path / "gone.log")
    (tmp_path / "loop").symlink_to(tmp_path)
    os.mkfifo(tmp_path / "pipe")
    report, result = diagnose_json(str(tmp_path))
    records = inputs_by_name(report)
    assert records["rank0.log"]["status"] == "read"
    assert "empty" in records["empty.log"]["reason"]
    assert "binary" in records["core.bin"]["reason"]
    assert "broken symbolic link" in records["dangling.log"]["reason"]
    assert "not followed" in records["loop"]["reason"]
    assert "not a regular file" in records["pipe"]["reason"]
    for name in ("empty.log", "core.bin", "dangling.log", "pipe"):
        assert name in result.stderr, f"{name} skipped silently"
    assert report["findings"][0]["category"] == "device_out_of_memory"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file_is_skipped(tmp_path: Path) -> None:
    locked = tmp_path / "locked.log"
    locked.write_text(OOM)
    locked.chmod(0)
    (tmp_path / "ok.log").write_text(OOM)
    report, _ = diagnose_json(str(tmp_path))
    assert inputs_by_name(report)["locked.log"]["reason"] == "permission denied"


def test_open_failure_is_skipped_and_the_scan_goes_on(tmp_path: Path, monkeypatch) -> None:
    locked = tmp_path / "locked.log"
    locked.write_text(OOM)
    (tmp_path / "ok.log").write_text(OOM)
    real_open = open

    def refusing_open(path, *args, **kwargs):
        if str(path) == str(locked):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", refusing_open)
    report, result = diagnose_json(str(tmp_path), "--jobs", "1")
    assert "Permission denied" in inputs_by_name(report)["locked.log"]["reason"]
    assert "locked.log" in result.stderr
    assert report["findings"][0]["category"] == "device_out_of_memory"


def test_an_explicit_fifo_is_read(tmp_path: Path) -> None:
    fifo = tmp_path / "stream"
    os.mkfifo(fifo)
    pid = os.fork()
    if pid == 0:
        with open(fifo, "w") as handle:
            handle.write(OOM)
        os._exit(0)
    report, _ = diagnose_json(str(fifo))
    os.waitpid(pid, 0)
    assert report["findings"][0]["category"] == "device_out_of_memory"


def test_many_files_stable_order(tmp_path: Path) -> None:
    for index in range(40):
        (tmp_path / f"rank{index}.log").write_text(f"step {index}\n")
    report, _ = diagnose_json(str(tmp_path), "--jobs", "2")
    names = [Path(record["path"]).name for record in report["inputs"]]
    assert names == sorted(names)
    assert len(names) == 40


def test_nested_tree_order_is_each_directory_then_its_subdirectories(tmp_path: Path) -> None:
    for name in ("b/z.log", "b/a/x.log", "a.log", "c.log", "a/y.log"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("step 1\n")
    report, _ = diagnose_json(str(tmp_path))
    paths = [Path(record["path"]).relative_to(tmp_path).as_posix() for record in report["inputs"]]
    assert paths == ["a.log", "c.log", "a/y.log", "b/z.log", "b/a/x.log"]


def test_a_directory_that_cannot_be_listed_is_reported(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "ok.log").write_text(OOM)
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "rank1.log").write_text(OOM)
    real_scandir = os.scandir

    def refusing_scandir(path):
        if str(path).endswith("private"):
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr("os.scandir", refusing_scandir)
    report, result = diagnose_json(str(tmp_path))
    assert "cannot list the directory: Permission denied" in inputs_by_name(report)["private"]["reason"]
    assert "private" in result.stderr
    assert inputs_by_name(report)["ok.log"]["status"] == "read"


PLOG = """\
[INFO] RUNTIME(31337,python):2024-12-04-15:32:50.001.100 [runtime.cc:100]31337 init ok, error code is 507015 in an INFO line
[EVENT] HCCL(31337,python):2024-12-04-15:32:50.002.100 [hccl.cc:10]31337 EI0002 event only
[ERROR] RUNTIME(31337,python):2024-12-04-15:32:53.009.508 [stream.cc:1000]31337 kernel task happen error, retCode=0x26, [aicore exception].
"""


def test_plog_tree_only_error_lines_are_matched(tmp_path: Path) -> None:
    plog = tmp_path / "log" / "debug" / "plog"
    plog.mkdir(parents=True)
    (plog / "plog-31337_20241204153250001.log").write_text(PLOG)
    device = tmp_path / "log" / "debug" / "device-0"
    device.mkdir()
    (device / "device-31337_20241204153250002.log").write_text(PLOG.replace("31337", "31338"))
    report, _ = diagnose_json(str(tmp_path / "log"))
    assert report["findings"], "the aicore exception in the ERROR line must be found"
    top = report["findings"][0]
    assert top["category"] == "aicore_exception"
    lines = {e["line"] for f in report["findings"] for e in f["evidence"]}
    assert lines == {3}, "INFO and EVENT plog lines are never matched"
    assert top["evidence"][0]["text"] in {  # the plog's or the device log's line, of process 31337 or 31338
        f"[ERROR] RUNTIME({pid},python):2024-12-04-15:32:53.009.508 [stream.cc:1000] "
        "kernel task happen error, retCode=0x26, [aicore exception]."
        for pid in (31337, 31338)
    }


@pytest.fixture()
def in_beijing(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process's local time zone is UTC+8 (POSIX form: no time zone database needed)."""
    monkeypatch.setenv("TZ", "CST-8")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_a_plog_time_is_local_time_and_a_time_with_a_zone_is_read_in_it(
    tmp_path: Path, in_beijing: None
) -> None:
    plog = tmp_path / "plog-31337_20241204153250001.log"
    plog.write_text(PLOG)
    kubectl = tmp_path / "pod.log"
    kubectl.write_text("2024-12-04T07:32:53.009508Z EL0004: Failed to allocate memory.\n")
    report, _ = diagnose_json(str(plog), str(kubectl))
    stamps = {f["category"]: f["evidence"][0]["timestamp"] for f in report["findings"]}
    utc = 1733297573.009508  # 2024-12-04 07:32:53.009508 UTC, 15:32:53 in Beijing
    assert stamps == {"aicore_exception": pytest.approx(utc), "device_out_of_memory": pytest.approx(utc)}


def test_an_old_plog_left_in_the_tree_does_not_outrank_this_runs_failure(tmp_path: Path) -> None:
    plog = tmp_path / "log" / "debug" / "plog"
    plog.mkdir(parents=True)
    (plog / "plog-31337_20241201090000000.log").write_text(PLOG.replace("2024-12-04", "2024-11-30"))
    (tmp_path / "log" / "train.log").write_text(f"[2024-12-04 15:32:50,120] INFO: step 1\n{OOM}")
    report, result = diagnose_json(str(tmp_path / "log"))
    assert report["findings"][0]["category"] == "device_out_of_memory"
    assert report["findings"][1]["category"] == "aicore_exception"
    assert "plog-31337_20241201090000000.log holds only errors from over 24 hours before" in result.stderr


def test_a_finding_of_an_earlier_run_says_so_in_the_report_not_only_on_stderr(tmp_path: Path) -> None:
    plog = tmp_path / "log" / "debug" / "plog"
    plog.mkdir(parents=True)
    (plog / "plog-31337_20241201090000000.log").write_text(PLOG.replace("2024-12-04", "2024-11-30"))
    (tmp_path / "log" / "train.log").write_text(f"[2024-12-04 15:32:50,120] INFO: step 1\n{OOM}")
    report, _ = diagnose_json(str(tmp_path / "log"))
    marks = {f["category"]: f["earlier_run"] for f in report["findings"]}
    assert marks["device_out_of_memory"] is None
    assert marks["aicore_exception"]["note"] == "earlier run, 4 days before"
    text = run_cli("diagnose", str(tmp_path / "log")).stdout
    assert "(earlier run, 4 days before)" in text


def test_an_old_log_of_the_awaited_rank_is_still_of_an_earlier_run(tmp_path: Path) -> None:
    """Rank 3 failed four days ago and failed again today; today's timeouts wait for today's rank 3."""
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "rank3.log").write_text(
        "[rank3]: " + PLOG.splitlines()[2].replace("2024-12-04", "2024-11-30") + "\n"
        "[rank3]: EZ9999: Inner Error!\n"
    )
    (tmp_path / "train.log").write_text(
        f"[2024-12-04 15:30:00,000] INFO: step 9\n[rank3]: {OOM}"
        "[rank0]: [ERROR] 2024-12-04-16:00:05 (PID:48200, Device:0, RankID:0) ERR02200 DIST call hccl api failed.\n"
        "[rank0]: EI0002: The wait execution of the Notify register times out. Reason: The Notify register has not "
        "received the Notify record from remote rank [3].\n"
    )
    report, result = diagnose_json(str(tmp_path / "old"), str(tmp_path / "train.log"))
    assert report["findings"][0]["category"] == "device_out_of_memory"
    assert "rank3.log holds only errors from over 24 hours before" in result.stderr
    old = [f for f in report["findings"] if all("/old/" in e["path"] for e in f["evidence"])]
    assert old and all(f["role"] == "cause" for f in old), "an old run's findings are nobody's symptom"


def test_the_ranks_that_waited_hours_for_the_first_failure_are_of_its_run(tmp_path: Path) -> None:
    """With HCCL_EXEC_TIMEOUT=7200 the others time out two hours after rank 3 failed."""
    (tmp_path / "rank3.log").write_text(PLOG.replace("2024-12-04-15:32", "2024-12-04-10:00"))
    timeout = (
        "[ERROR] 2024-12-04-12:00:05 (PID:48200, Device:0, RankID:0) ERR02200 DIST call hccl api failed.\n"
        "EI0002: The wait execution of the Notify register times out. Reason: The Notify register has not "
        "received the Notify record from remote rank [3].\n"
    )
    (tmp_path / "rank0.log").write_text(timeout)
    report, result = diagnose_json(str(tmp_path))
    assert report["findings"][0]["category"] == "aicore_exception"
    assert "more than one run" not in result.stderr


def test_a_utc_log_beside_local_time_plogs_is_of_their_run(tmp_path: Path) -> None:
    """kubectl --timestamps writes UTC; the plogs of the same run are in China time, 8 hours on."""
    plog = tmp_path / "debug" / "plog"
    plog.mkdir(parents=True)
    (plog / "plog-31337_20241204183250001.log").write_text(PLOG.replace("15:32", "18:32"))
    (tmp_path / "train.log").write_text(
        f"2024-12-04T10:32:40.120Z [rank3]: {OOM}"
        + "".join(
            f"2024-12-04T11:02:41.000Z [rank{rank}]: EI0002: The wait execution of the Notify register times out. "
            "Reason: The Notify register has not received the Notify record from remote rank [3].\n"
            for rank in (0, 1, 2)
        )
    )
    report, result = diagnose_json(str(tmp_path))
    assert "more than one run" not in result.stderr
    assert report["findings"][0]["category"] in ("device_out_of_memory", "aicore_exception")
    assert all(f["category"] != "hccl_timeout" for f in report["findings"][:2])


def test_no_path_with_a_terminal_scans_the_cann_log_places(tmp_path: Path, monkeypatch) -> None:
    logs = tmp_path / "job-logs"
    (logs / "debug" / "plog").mkdir(parents=True)
    (logs / "debug" / "plog" / "plog-1_2.log").write_text(PLOG)
    monkeypatch.setattr("ascend_doctor.cli.diagnose.stdin_is_terminal", lambda: True)
    result = run_cli("diagnose", env={"ASCEND_PROCESS_LOG_PATH": str(logs), "HOME": str(tmp_path)})
    assert f"scanning {logs}" in result.stderr
    assert result.exit_code == 1


def test_a_dash_with_a_terminal_on_stdin_says_how_to_end_the_log(monkeypatch) -> None:
    monkeypatch.setattr("ascend_doctor.cli.diagnose.stdin_is_terminal", lambda: True)
    result = run_cli("diagnose", "-", stdin=OOM)
    assert "paste it, then press Ctrl-D" in result.stderr
    assert result.exit_code == 1


def test_no_path_and_no_log_places_is_a_clear_error(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr("ascend_doctor.cli.diagnose.stdin_is_terminal", lambda: True)
    monkeypatch.setattr("ascend_doctor.cli.diagnose.default_log_places", lambda: [])
    result = run_cli("diagnose", env={"HOME": str(tmp_path)})
    assert result.exit_code == 2
    assert "no log given" in result.stderr


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ((), "no log given, and nothing came in on standard input"),
        (("-",), "cannot read <stdin>: empty input"),
    ],
    ids=["no path (a CI step without a pipe)", "dash"],
)
def test_empty_stdin_is_an_input_error_like_an_empty_file(tmp_path: Path, args: tuple, said: str) -> None:
    result = run_cli("diagnose", *args, stdin=b"")
    assert result.exit_code == 2
    assert said in result.stderr
    (tmp_path / "empty.log").write_bytes(b"")
    assert run_cli("diagnose", str(tmp_path / "empty.log")).exit_code == 2


def test_empty_stdin_beside_a_log_is_listed_and_the_log_diagnosed(tmp_path: Path) -> None:
    (tmp_path / "rank0.log").write_text(OOM)
    report, result = diagnose_json("-", str(tmp_path / "rank0.log"), stdin=b"")
    assert report["inputs"][0]["reason"] == "empty input: nothing came in on standard input"
    assert "skipped <stdin>: empty input" in result.stderr
    assert report["findings"][0]["category"] == "device_out_of_memory"


def test_all_inputs_skipped_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_bytes(b"")
    (tmp_path / "b.log").write_bytes(b"")
    result = run_cli("diagnose", str(tmp_path))
    assert result.exit_code == 2
    assert "a.log" in result.stderr and "nothing to read" in result.stderr


FORMATS = ("text", "json", "sarif", "markdown", "gitlab", "junit", "github")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_reports_of_earlier_runs_in_a_log_directory_are_not_diagnosed(tmp_path: Path, lang: str) -> None:
    """A CI step writing `-o logs/report.sarif` must not make the next run diagnose the report:
    it quotes the evidence, and SARIF carries every rule's help text."""
    (tmp_path / "rank0.log").write_text(OOM)
    alone, _ = diagnose_json(str(tmp_path))
    for fmt in FORMATS:
        written = run_cli(
            "diagnose", str(tmp_path), "--lang", lang, "-f", fmt, "-o", str(tmp_path / f"report.{fmt}")
        )
        assert written.exit_code == 1, written.stderr
    report, result = diagnose_json(str(tmp_path))
    assert report["findings"] == alone["findings"]
    records = inputs_by_name(report)
    for fmt in FORMATS:
        assert records[f"report.{fmt}"]["reason"] == "an ascend-doctor report, not a log"
        assert f"report.{fmt}" in result.stderr


@pytest.mark.parametrize(
    "head",
    [
        "Diagnosis: nightly pretrain job 42\n",
        '{"asctime": "2024-12-04 10:36:02", "name": "ascend-doctor", "message": "step 1"}\n',
        "$ ascend-doctor diagnose logs -f sarif\n## ascend-doctor: pending\n",
    ],
    ids=[
        "a first line like the text report's",
        "a JSON log of a logger so named",
        "a CI log quoting the tool",
    ],
)
def test_a_log_that_merely_looks_like_a_report_is_read(tmp_path: Path, head: str) -> None:
    (tmp_path / "logs").mkdir()
    log = tmp_path / "logs" / "ci.log"
    log.write_text(head + OOM)
    for target in (log, log.parent):
        report, _ = diagnose_json(str(target))
        assert [record["status"] for record in report["inputs"]] == ["read"]
        assert report["findings"][0]["category"] == "device_out_of_memory"


def test_a_coloured_report_and_one_fenced_for_github_actions_are_recognised(tmp_path: Path) -> None:
    (tmp_path / "rank0.log").write_text(OOM)
    run_cli("diagnose", str(tmp_path), "--color", "-o", str(tmp_path / "coloured.txt"))
    fenced = run_cli("diagnose", str(tmp_path / "rank0.log"), env={"GITHUB_ACTIONS": "true"}).stdout
    assert fenced.startswith("::stop-commands::")
    (tmp_path / "fenced.txt").write_text(fenced)
    records = inputs_by_name(diagnose_json(str(tmp_path))[0])
    assert (
        records["coloured.txt"]["reason"]
        == records["fenced.txt"]["reason"]
        == "an ascend-doctor report, not a log"
    )


def test_the_output_may_not_replace_a_log_being_diagnosed(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    log = logs / "rank0.log"
    log.write_text(OOM)
    elsewhere = tmp_path / "rank5.log"
    elsewhere.write_text(OOM)
    (logs / "latest.log").symlink_to(elsewhere)
    os.link(elsewhere, tmp_path / "hard.log")
    for target, output in [
        (log, log),
        (logs, log),
        (logs, logs / "latest.log"),
        (logs, tmp_path / "hard.log"),
    ]:
        result = run_cli("diagnose", str(target), "-o", str(output))
        assert result.exit_code == 2, (target, output)
        assert "is one of the logs to diagnose" in result.stderr
    assert log.read_text() == elsewhere.read_text() == OOM
    result = run_cli("diagnose", str(log), "-o", str(logs))
    assert result.exit_code == 2 and "is a directory" in result.stderr
    earlier = logs / "report.txt"
    earlier.write_text("")
    assert run_cli("diagnose", str(logs), "-o", str(earlier)).exit_code == 1
    assert run_cli("diagnose", str(logs), "-o", str(earlier)).exit_code == 1
    assert earlier.read_text().startswith("Diagnosis: ")


def test_a_file_named_twice_is_read_once_and_the_repeat_is_listed(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "rank0.log").write_text(OOM)
    (logs / "latest.log").symlink_to(logs / "rank0.log")
    report, result = diagnose_json(str(logs / "rank0.log"), str(logs), str(logs / "rank0.log"))
    read = [record for record in report["inputs"] if record["status"] == "read"]
    assert [Path(record["path"]).name for record in read] == ["rank0.log"]
    repeats = [record for record in report["inputs"] if record["status"] == "skipped"]
    assert len(repeats) == 3
    assert {record["reason"] for record in repeats} == {f"the same file as {logs / 'rank0.log'}"}
    assert report["findings"][0]["count"] == 1
    assert "latest.log: the same file as" in result.stderr


def test_a_file_and_a_link_to_it_are_read_by_the_file_s_own_name(tmp_path: Path) -> None:
    """`current.log -> rank3.log` sorts first; reading it by the link's name would lose the rank."""
    (tmp_path / "rank3.log").write_text(OOM)
    (tmp_path / "current.log").symlink_to(tmp_path / "rank3.log")
    report, _ = diagnose_json(str(tmp_path))
    records = inputs_by_name(report)
    assert records["rank3.log"]["status"] == "read"
    assert records["current.log"]["reason"] == f"the same file as {tmp_path / 'rank3.log'}"
    assert report["findings"][0]["evidence"][0]["rank"] == 3


def test_archives_are_named_as_archives_not_binaries(tmp_path: Path) -> None:
    import tarfile
    import zipfile

    log = tmp_path / "rank0.log"
    log.write_text(OOM)
    with tarfile.open(tmp_path / "logs.tar.gz", "w:gz") as archive:
        archive.add(log, "rank0.log")
    with zipfile.ZipFile(tmp_path / "logs.zip", "w") as archive:
        archive.write(log, "rank0.log")
    records = inputs_by_name(diagnose_json(str(tmp_path))[0])
    assert records["logs.tar.gz"]["reason"] == "a tar archive: extract it and diagnose the directory"
    assert records["logs.zip"]["reason"] == "a zip archive: extract it and diagnose the directory"


@pytest.mark.parametrize("exit_zero", [False, True])
def test_a_named_path_that_cannot_be_read_is_exit_2_and_the_rest_is_reported(
    tmp_path: Path, exit_zero
) -> None:
    (tmp_path / "rank0.log").write_text(OOM)
    (tmp_path / "current.log").symlink_to(tmp_path / "rotated-away.log")
    flags = ["--exit-zero"] if exit_zero else []
    for missing in ("current.log", "nope.log"):
        result = run_cli("diagnose", str(tmp_path / "rank0.log"), str(tmp_path / missing), *flags)
        assert result.exit_code == 2, missing
        assert "Diagnosis: " in result.stdout and "EL0004" not in result.stderr
        assert f"skipped {tmp_path / missing}" in result.stderr


def test_what_is_not_a_log_changes_no_exit_code(tmp_path: Path) -> None:
    (tmp_path / "rank0.log").write_text(OOM)
    (tmp_path / "core.bin").write_bytes(b"\x7fELF\x00\x00\x01binary")
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "dangling.log").symlink_to(tmp_path / "gone.log")
    (tmp_path / "logs" / "loop-a").symlink_to(tmp_path / "logs" / "loop-b")
    (tmp_path / "logs" / "loop-b").symlink_to(tmp_path / "logs" / "loop-a")
    result = run_cli(
        "diagnose", str(tmp_path / "rank0.log"), str(tmp_path / "core.bin"), str(tmp_path / "logs")
    )
    assert result.exit_code == 1
    for name in (
        "core.bin: binary",
        "dangling.log: broken symbolic link",
        "loop-a: cannot stat: Too many levels",
    ):
        assert name in result.stderr


def test_stdin_named_twice_is_read_once_and_says_so() -> None:
    report, result = diagnose_json("-", "-", stdin=OOM)
    assert [record["status"] for record in report["inputs"]] == ["read", "skipped"]
    assert "standard input named twice" in result.stderr
    assert report["findings"][0]["count"] == 1


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_a_named_file_that_says_size_0_is_read_all_the_same() -> None:
    report, result = diagnose_json("/proc/self/status")
    assert report["inputs"][0]["status"] == "read" and report["inputs"][0]["lines"] > 5
    assert result.exit_code == 0


def test_a_missing_path_whose_name_is_not_utf8_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "rank0.log").write_text(OOM)
    missing = os.fsdecode(bytes(tmp_path / "rank0.log")[:-9] + b"miss\xb2ing.log")
    result = run_cli("diagnose", str(tmp_path / "rank0.log"), missing, "--exit-zero")
    assert result.exit_code == 2, result.stderr


def test_a_file_name_cannot_start_a_line_or_a_ci_command(tmp_path: Path) -> None:
    (tmp_path / "e\n::error::X.log").write_bytes(b"")
    (tmp_path / "r\n::add-mask::Y.log").write_text(OOM)
    report, result = diagnose_json(str(tmp_path))
    lines = result.stderr.splitlines() + result.stdout.splitlines()
    assert not [line for line in lines if line.lstrip().startswith("::")]
    assert {Path(record["path"]).name for record in report["inputs"]} == {
        "e\\x0a::error::X.log",
        "r\\x0a::add-mask::Y.log",
    }
    assert report["findings"][0]["category"] == "device_out_of_memory"


def test_an_empty_directory_is_said_to_hold_no_file(tmp_path: Path) -> None:
    result = run_cli("diagnose", str(tmp_path))
    assert result.exit_code == 2
    assert "no file was found in the directories given" in result.stderr


def test_a_log_truncated_in_place_is_read_past_its_nul_bytes(tmp_path: Path) -> None:
    """logrotate's copytruncate while the job writes on leaves a hole of NUL bytes at the start."""
    log = tmp_path / "train.log"
    log.write_bytes(b"\0" * 200_000 + b"step 9 loss 2.0\n" + OOM.encode())
    report, result = diagnose_json(str(log))
    assert report["findings"][0]["evidence"][0]["line"] == 2
    assert "truncated in place" in result.stderr
    binary = tmp_path / "core.bin"
    binary.write_bytes(b"\0\0\0abc\0def\n" + OOM.encode())
    assert "binary file" in run_cli("diagnose", str(binary)).stderr
