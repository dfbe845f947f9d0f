"""The command line as a user meets it: exit codes, messages, formats, stdin, colour."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest

from ascend_doctor import __version__
from ascend_doctor.cli.app import app
from tests.conftest import diagnose_json, run_cli

OOM_LOG = (
    "step 10 loss 2.3\n"
    "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB\n"
    "EL0004: Failed to allocate memory.\n"
)


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def test_version() -> None:
    result = run_cli("--version")
    assert result.exit_code == 0
    assert __version__ in result.stdout


def test_every_command_has_help_with_an_example() -> None:
    commands = (
        ["diagnose"],
        ["rules", "list"],
        ["rules", "show"],
        ["rules", "test"],
        ["explain"],
        ["merge"],
        ["collect"],
    )
    for command in commands:
        result = run_cli(*command, "--help")
        assert result.exit_code == 0, command
        assert "ascend-doctor" in result.stdout and "Example" in result.stdout, command


def _help_lines(option: str) -> dict[str, tuple[str, str]]:
    """The line `--help` shows for `option` (its spelling and choices, then its help), by the command
    line of each command that takes it."""
    lines = {}
    commands: list[tuple[str, click.Command]] = [("", app())]
    while commands:
        name, command = commands.pop()
        if isinstance(command, click.Group):
            commands += [(f"{name} {sub}".strip(), each) for sub, each in command.commands.items()]
            continue
        context = click.Context(command, info_name=name)
        for param in command.params:
            record = param.get_help_record(context)
            if option in (*param.opts, *param.secondary_opts) and record is not None:
                lines[name] = record
    return lines


@pytest.mark.parametrize("option", ["--lang", "--color", "--rules", "--engine", "--no-cache", "--debug"])
def test_an_option_several_commands_take_reads_the_same_in_each_help(option: str) -> None:
    lines = _help_lines(option)
    assert len(lines) > 1, lines
    assert len(set(lines.values())) == 1, lines


def test_fail_on_offers_the_same_severities_and_default_wherever_it_is_taken() -> None:
    lines = _help_lines("--fail-on")
    assert len(lines) > 1, lines
    assert len({(spelling, text.rpartition("[default:")[2]) for spelling, text in lines.values()}) == 1, lines


def test_a_failing_log_exits_1_and_names_the_cause(tmp_path: Path) -> None:
    log = write(tmp_path, "train.log", OOM_LOG)
    result = run_cli("diagnose", str(log))
    assert result.exit_code == 1
    assert "Diagnosis:" in result.stdout
    assert f"{log}:3" in result.stdout or f"{log}:2" in result.stdout


def test_a_healthy_log_exits_0(tmp_path: Path) -> None:
    log = write(tmp_path, "ok.log", "epoch 1 loss 0.5\nepoch 2 loss 0.4\ntraining finished\n")
    result = run_cli("diagnose", str(log))
    assert result.exit_code == 0
    assert "No failure: The training run finished." in result.stdout
    log = write(tmp_path, "quiet.log", "epoch 1 loss 0.5\nepoch 2 loss 0.4\n")
    assert "No known Ascend failure cause found" in run_cli("diagnose", str(log)).stdout


def test_missing_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = run_cli("diagnose", str(tmp_path / "nope.log"))
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0
    assert "nope.log" in result.stderr and "Traceback" not in result.stderr


def test_missing_file_among_others_still_reports_and_exits_2(tmp_path: Path) -> None:
    log = write(tmp_path, "train.log", OOM_LOG)
    result = run_cli("diagnose", str(log), str(tmp_path / "nope.log"))
    assert result.exit_code == 2
    assert "Diagnosis:" in result.stdout
    assert "nope.log" in result.stderr


def test_dash_reads_stdin_and_is_short_for_diagnose() -> None:
    result = run_cli("-", "--format", "json", stdin=OOM_LOG)
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["inputs"][0]["path"] == "<stdin>"
    assert report["findings"][0]["category"] == "device_out_of_memory"


def test_a_bare_path_is_short_for_diagnose(tmp_path: Path) -> None:
    log = write(tmp_path, "train.log", OOM_LOG)
    assert run_cli(str(log)).exit_code == 1


def test_json_document_shape(tmp_path: Path) -> None:
    log = write(tmp_path, "train.log", OOM_LOG)
    report, _ = diagnose_json(str(log), str(tmp_path))
    assert report["schema_version"] == 2
    assert report["tool"] == {"name": "ascend-doctor", "version": __version__}
    top = report["findings"][0]
    for key in ("rule_id", "category", "title", "cause", "fix", "env", "confidence", "count", "evidence"):
        assert key in top
    assert 0 < top["confidence"] <= 1
    assert {"path", "line", "text"} <= set(top["evidence"][0])


def test_one_finding_per_cause_however_many_lines(tmp_path: Path) -> None:
    log = write(tmp_path, "train.log", "EL0004: Failed to allocate memory.\n" * 50)
    report, _ = diagnose_json(str(log))
    ids = [finding["rule_id"] for finding in report["findings"]]
    assert len(ids) == len(set(ids))
    assert report["findings"][0]["count"] == 50


def test_log_text_is_never_markup(tmp_path: Path) -> None:
    line = "EL0004: Failed to allocate memory. [bold red]boom[/] [link=http://x]y[/link]"
    log = write(tmp_path, "train.log", line + "\n")
    result = run_cli("diagnose", "--color", str(log))
    assert "[bold red]boom[/]" in result.stdout


def test_no_color_output_has_no_escape_codes(tmp_path: Path) -> None:
    log = write(tmp_path, "train.log", OOM_LOG)
    result = run_cli("diagnose", str(log), env={"NO_COLOR": "1"})
    assert "\x1b[" not in result.stdout


def test_color_flag_colours_a_pipe_and_a_file_with_the_same_text(tmp_path: Path) -> None:
    import re

    log = write(tmp_path, "train.log", OOM_LOG)
    plain = run_cli("diagnose", str(log)).stdout
    assert "\x1b[" not in plain
    piped = run_cli("diagnose", "--color", str(log), env={"NO_COLOR": "1"}).stdout
    run_cli("diagnose", "--color", "-o", str(tmp_path / "report.txt"), str(log))
    for coloured in (piped, (tmp_path / "report.txt").read_text()):
        assert "\x1b[" in coloured
        assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == plain


def test_exit_zero_and_fail_on(tmp_path: Path) -> None:
    log = write(tmp_path, "train.log", OOM_LOG)
    assert run_cli("diagnose", "--exit-zero", str(log)).exit_code == 0
    assert run_cli("diagnose", "--fail-on", "never", str(log)).exit_code == 0
    assert run_cli("diagnose", "--fail-on", "error", str(log)).exit_code == 1


def test_output_file(tmp_path: Path) -> None:
    log = write(tmp_path, "train.log", OOM_LOG)
    out = tmp_path / "report.json"
    result = run_cli("diagnose", "-f", "json", "-o", str(out), str(log))
    assert result.exit_code == 1
    assert result.stdout == ""
    assert json.loads(out.read_text())["findings"]


def test_chinese_report(tmp_path: Path) -> None:
    log = write(tmp_path, "train.log", OOM_LOG)
    english, _ = diagnose_json(str(log))
    chinese, _ = diagnose_json("--lang", "zh", str(log))
    assert english["findings"][0]["title"] != chinese["findings"][0]["title"]
    assert any("\u4e00" <= ch <= "\u9fff" for ch in chinese["findings"][0]["cause"])


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_a_chinese_report_labels_severity_and_confidence_in_chinese(tmp_path: Path, fmt: str) -> None:
    log = write(tmp_path, "train.log", OOM_LOG)
    shown = run_cli("diagnose", "--lang", "zh", "-f", fmt, str(log)).stdout
    assert "错误" in shown and "置信度 0.90" in shown
    assert "confidence" not in shown and "error ·" not in shown and "**error**" not in shown


def test_unknown_format_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli("diagnose", "--format", "yaml", "x.log")
    assert result.exit_code == 2


def test_env_remedy_value_comes_from_the_log(tmp_path: Path) -> None:
    line = "ImportError: /opt/conda/lib/python3.9/site-packages/torch/lib/libgomp-6e1a1d1b.so.1.0.0: cannot allocate memory in static TLS block"
    log = write(tmp_path, "train.log", line + "\n")
    report, _ = diagnose_json(str(log))
    remedies = {env["name"]: env["value"] for env in report["findings"][0]["env"]}
    assert (
        remedies["LD_PRELOAD"] == "/opt/conda/lib/python3.9/site-packages/torch/lib/libgomp-6e1a1d1b.so.1.0.0"
    )
    text = run_cli("diagnose", str(log)).stdout
    assert (
        "export LD_PRELOAD=/opt/conda/lib/python3.9/site-packages/torch/lib/libgomp-6e1a1d1b.so.1.0.0" in text
    )


def test_warnings_alone_exit_0_by_default(tmp_path: Path) -> None:
    line = "[W VariableFallbackKernel.cpp:51] Warning: CAUTION: The operator 'aten::isin.Tensor_Tensor_out' is not currently supported on the NPU backend and will fall back to run on the CPU. This may have performance implications."
    log = write(tmp_path, "train.log", line + "\ntraining finished\n")
    result = run_cli("diagnose", str(log))
    assert result.exit_code == 0
    assert "fall back" in result.stdout
    assert run_cli("diagnose", "--fail-on", "warning", str(log)).exit_code == 1


@pytest.mark.parametrize(
    ("argv", "module"),
    [(["rules", "list"], "ascend_doctor.cli.app"), (["train.log"], "ascend_doctor.cli.diagnose")],
    ids=["click CLI", "plain diagnosis"],
)
def test_ctrl_c_while_the_cli_is_still_importing(argv, module, monkeypatch, capsys) -> None:
    import sys

    from ascend_doctor.cli import entry

    class InterruptedImport:
        def find_spec(self, name, path=None, target=None):
            if name == module:
                raise KeyboardInterrupt
            return None

    monkeypatch.setattr(sys, "argv", ["ascend-doctor", *argv])
    monkeypatch.delitem(sys.modules, module)
    monkeypatch.setattr(sys, "meta_path", [InterruptedImport(), *sys.meta_path])
    with pytest.raises(SystemExit) as stopped:
        entry.main()
    assert stopped.value.code == 130
    assert capsys.readouterr().err.strip() == "ascend-doctor: interrupted"


def test_every_command_into_a_full_disk_is_one_line_and_exit_2() -> None:
    import subprocess
    import sys

    for args in (["rules", "list"], ["explain", "EL0004"], ["rules", "show", "hccl.ei0002-notify-timeout"]):
        with open("/dev/full", "w") as full:
            done = subprocess.run(
                [sys.executable, "-m", "ascend_doctor", *args], stdout=full, stderr=subprocess.PIPE, text=True
            )
        assert done.returncode == 2, args
        assert done.stderr.count("\n") == 1 and "cannot write" in done.stderr, (args, done.stderr)


@pytest.mark.parametrize(
    ("engine", "hyperscan", "threshold", "told"),
    [
        ("auto", False, 1000, True),
        ("auto", False, 10**9, False),
        ("auto", True, 1000, False),
        ("python", False, 1000, False),
    ],
    ids=["big log without hyperscan", "small log", "hyperscan installed", "python chosen"],
)
def test_a_big_scan_without_hyperscan_says_why_it_was_absent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str, hyperscan: bool, threshold: int, told: bool
) -> None:
    from ascend_doctor.cli import diagnose

    reason = "hyperscan has no wheel for Python 3.9 on Linux ppc64le"
    monkeypatch.setattr(diagnose, "FAST_ENGINE_HINT", threshold)
    monkeypatch.setattr(diagnose, "hyperscan_missing", lambda: None if hyperscan else reason)
    log = write(tmp_path, "train.log", "step 1 loss 2.3\n" * 200_000)
    result = run_cli("diagnose", "--engine", engine, str(log))
    assert result.exit_code == 0, result.stderr
    assert (reason in result.stderr) is told
    assert "ascend-doctor[fast]" not in result.stderr
    if told:
        assert "3 MB were read without hyperscan" in result.stderr


@pytest.mark.parametrize("command", [["diagnose", "LOG"], ["rules", "test"]])
def test_asking_for_hyperscan_without_it_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    from ascend_doctor.match import prefilter

    reason = (
        "hyperscan is installed but failed to import (ImportError: libhs.so.5: cannot open shared object)"
    )
    monkeypatch.setattr(prefilter, "hyperscan_missing", lambda: reason)
    log = write(tmp_path, "train.log", OOM_LOG)
    result = run_cli(*[str(log) if arg == "LOG" else arg for arg in command], "--engine", "hyperscan")
    assert result.exit_code == 2
    assert reason in result.stderr and "--engine auto" in result.stderr
    assert "internal error" not in result.stderr


def test_a_mistyped_command_is_named_not_only_reported_as_a_missing_file() -> None:
    result = run_cli("explian", "EL0004")
    assert result.exit_code == 2
    assert "did you mean 'ascend-doctor explain'?" in result.stderr
    assert "did you mean" not in run_cli("train.log").stderr


def test_a_mistyped_command_is_a_usage_error_and_nothing_is_diagnosed(tmp_path: Path) -> None:
    log = write(tmp_path, "x.log", OOM_LOG)
    result = run_cli("diag", str(log))
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        "ascend-doctor: error: 'diag' is not a file or a command; did you mean 'ascend-doctor diagnose'?\n"
    )


@pytest.mark.skipif(not hasattr(__import__("os"), "openpty"), reason="needs a pseudo-terminal")
def test_on_a_terminal_color_flag_beats_no_color_and_no_color_env_is_obeyed(tmp_path: Path) -> None:
    import os

    from tests.processes import run_on_terminal

    log = write(tmp_path, "train.log", OOM_LOG)
    env = {**os.environ, "NO_COLOR": "1", "TERM": "xterm-256color", "COLUMNS": "200"}

    def shown(*flags: str) -> bytes:
        return run_on_terminal([*flags, str(log)], "stdout", env)[1]

    assert b"\x1b[1;31m" in shown("--color")
    assert b"\x1b[" not in shown()


def test_stderr_follows_lang(tmp_path: Path) -> None:
    (tmp_path / "empty.log").write_text("")
    write(tmp_path, "train.log", OOM_LOG)
    chinese = run_cli("diagnose", "--lang", "zh", str(tmp_path), str(tmp_path / "gone.log"))
    assert chinese.exit_code == 2
    assert f"ascend-doctor：已跳过 {tmp_path / 'empty.log'}：空文件" in chinese.stderr
    assert f"ascend-doctor：已跳过 {tmp_path / 'gone.log'}：文件或目录不存在" in chinese.stderr
    failed = run_cli("diagnose", "--lang", "zh", str(tmp_path / "gone.log"))
    assert failed.stderr == f"ascend-doctor：错误：无法读取 {tmp_path / 'gone.log'}：文件或目录不存在\n"
    english = run_cli("diagnose", "--lang", "en", str(tmp_path / "gone.log"))
    assert (
        english.stderr
        == f"ascend-doctor: error: cannot read {tmp_path / 'gone.log'}: no such file or directory\n"
    )
