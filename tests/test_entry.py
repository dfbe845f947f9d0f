"""A plain diagnosis skips click for start-up (see quick_args): it must answer exactly as the click
command does, and hand everything it does not fully understand to click."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from unittest import mock

import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ascend_doctor.cli import app as cli_module
from ascend_doctor.cli.app import app
from ascend_doctor.cli.quick_args import FLAGS, VALUED, quick_request
from ascend_doctor.cli.request import COMMANDS, DiagnoseRequest
from tests.conftest import FIXTURES
from tests.processes import run_watching_import

ENTRY = (sys.executable, "-m", "ascend_doctor")
CLICK = (sys.executable, "-c", "import sys; from ascend_doctor.cli.app import main; main(sys.argv[1:])")
# Options the environment could set, and Actions, which adds annotations: neither may leak in.
SETTINGS = ("ASCEND_DOCTOR_FORMAT", "ASCEND_DOCTOR_FAIL_ON", "GITHUB_ACTIONS")


@pytest.mark.parametrize(
    ("args", "paths"),
    [
        (["train.log"], ("train.log",)),
        (["diagnose", "a.log", "plog/"], ("a.log", "plog/")),
        (["-"], ("-",)),
        (["diagnose"], ()),
        (["logs/diagnose"], ("logs/diagnose",)),
    ],
)
def test_plain_paths_are_diagnosed_directly(args: list[str], paths: tuple[str, ...]) -> None:
    assert quick_request(args, {}) == DiagnoseRequest(paths=paths)


COMMON_LINES = [
    ["train.log", "--format", "json"],
    ["diagnose", "-f", "sarif", "-o", "ascend.sarif", "--exit-zero", "train.log"],
    ["--format=markdown", "--fail-on", "warning", "a.log", "plog/"],
    ["--engine", "python", "-j", "2", "--no-color", "train.log"],
    ["-", "--stdin-name", "job 42", "--lang", "zh", "--rules", "mine", "--rules=theirs"],
]


@pytest.mark.parametrize("args", COMMON_LINES)
def test_common_options_are_read_without_click(args: list[str]) -> None:
    request = quick_request(args, {})
    assert request is not None and request != DiagnoseRequest(paths=request.paths)
    assert request == _click_request(args)


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--help"],
        ["train.log", "-h"],
        ["--version"],
        ["diagnose", "--", "-odd-name.log"],
        ["-odd-name.log"],
        ["-fjson", "train.log"],
        ["train.log", "--format", "yaml"],
        ["train.log", "--jobs", "0"],
        ["train.log", "--jobs", "2" * 5000],  # more digits than int() takes: click's usage error
        ["train.log", "--format", "json", "--format", "text"],
        ["train.log", "--color", "--no-color"],
        ["train.log", "--exit-zero=yes"],
        ["train.log", "--output"],
        ["explain", "EL0004"],
        ["rules", "list"],
    ],
)
def test_everything_else_goes_to_click(args: list[str]) -> None:
    assert quick_request(args, {}) is None


def test_every_click_command_is_known_to_the_entry_point() -> None:
    """Otherwise `ascend-doctor NEWCOMMAND` would diagnose a file of that name."""
    assert set(COMMANDS) == set(app().commands)


@pytest.mark.parametrize("name", ["ASCEND_DOCTOR_FORMAT", "ASCEND_DOCTOR_FAIL_ON", "_ASCEND_DOCTOR_COMPLETE"])
def test_options_set_in_the_environment_go_to_click(name: str) -> None:
    assert quick_request(["train.log"], {name: "json"}) is None


def _click_request(args: list[str]) -> DiagnoseRequest | None:
    """The request the click command builds from `args`, or None when it refuses them."""
    seen: list[DiagnoseRequest] = []
    with mock.patch.object(cli_module, "run_diagnose", lambda request: seen.append(request) or 0):
        try:
            cli_module.cli.main(args=list(args), prog_name="ascend-doctor", standalone_mode=False)
        except click.ClickException:
            return None
        except SystemExit:
            pass
    return seen[0] if seen else None


# Pieces of command lines: what the quick reader takes, and what it must leave to click.
PIECES = [
    *([path] for path in ("a.log", "-", "", "diagnose", "x=y.log", "-odd.log", "logs/")),
    ["--format", "json"], ["--format=sarif"], ["-f", "text"], ["--format", "yaml"], ["--format"],
    ["-o", "out.json"], ["-o", "-"], ["--output=r.txt"], ["--output", "--debug"], ["-o=x"],
    ["--rules", "mine"], ["--rules=r2"], ["--rules"], ["--lang", "zh"], ["--lang", "fr"],
    ["--fail-on", "warning"], ["--fail-on=never"], ["--stdin-name", "job"], ["--stdin-name="],
    ["--engine", "python"], ["--engine=hyperscan"], ["--engine", "Python"],
    ["--jobs", "2"], ["-j", "64"], ["--jobs=007"], ["--jobs", "0"], ["--jobs", "65"],
    ["-j", "\u0663"], ["--jobs", " 2"], ["-j2"], ["--jobs", "2" * 5000],
    ["--exit-zero"], ["--exit-zero=1"], ["--color"], ["--no-color"], ["--no-cache"], ["--debug"], ["--tee"],
    ["--node", "npu-17"], ["--node=npu-3"], ["--node"],
    ["--"], ["--help"], ["-h"], ["--version"], ["-fjson"], ["--out", "x"], ["explain"], ["rules"],
]  # fmt: skip


def test_the_pieces_try_every_option_the_quick_reader_knows() -> None:
    spellings = {arg.partition("=")[0] for piece in PIECES for arg in piece}
    assert set(VALUED) | set(FLAGS) <= spellings


def test_the_quick_reader_knows_only_options_of_the_click_command() -> None:
    command = cli_module.cli.commands["diagnose"]
    click_spellings = {name for param in command.params for name in [*param.opts, *param.secondary_opts]}
    assert set(VALUED) | set(FLAGS) <= click_spellings


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=6))
def test_what_the_quick_reader_takes_is_what_click_builds(pieces: list[list[str]]) -> None:
    args = [arg for piece in pieces for arg in piece]
    request = quick_request(args, {})
    if request is not None:
        assert request == _click_request(args), args


def _environment() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if name not in SETTINGS}


def _both(args: list[str], cwd: Path, stdin: bytes) -> list[subprocess.CompletedProcess[bytes]]:
    """The same command line through the entry point and through click."""
    return [
        subprocess.run([*command, *args], input=stdin, capture_output=True, cwd=cwd, env=_environment())
        for command in (ENTRY, CLICK)
    ]


def _cases(tmp_path: Path) -> list[tuple[list[str], bytes]]:
    fixture = FIXTURES / "hccl-ei0002-notify-timeout.log"
    assert fixture.is_file()
    (tmp_path / "clean.log").write_text("epoch 1 loss 0.5\ntraining finished\n")
    (tmp_path / "model.bin").write_bytes(b"\x00\x01\x02" * 100)
    (tmp_path / "esc\x1b[31mname.log").write_bytes(b"\x00\x01\x02" * 100)
    return [
        ([str(fixture)], b""),
        (["diagnose", str(fixture), str(FIXTURES / "hccl-8rank-oom")], b""),
        (["clean.log"], b""),
        (["missing.log", "clean.log"], b""),
        (["missing.log"], b""),
        (["."], b""),
        (["-"], fixture.read_bytes()),
        (["diagnose"], fixture.read_bytes()),
        (["diagnose", "diagnose"], b""),
        ([""], b""),
        ([str(fixture), "--format", "json"], b""),
        (["--format=sarif", "--exit-zero", str(fixture)], b""),
        (["-", "--fail-on", "never", "--stdin-name", "job 7", "-f", "markdown"], fixture.read_bytes()),
        (["--engine", "python", "-j", "2", "--no-color", "--lang", "zh", str(fixture)], b""),
        (["--rules", "no-such-dir", str(fixture)], b""),
        (["-o", "report.txt", str(fixture)], b""),
    ]


def test_the_direct_diagnosis_answers_as_the_click_command_does(tmp_path: Path) -> None:
    for args, stdin in _cases(tmp_path):
        direct, through_click = _both(args, tmp_path, stdin)
        assert direct.returncode == through_click.returncode, args
        assert direct.stdout == through_click.stdout, args
        assert direct.stderr == through_click.stderr, args
        assert direct.returncode in (0, 1, 2), (args, direct.stderr)


def test_the_cases_cover_every_outcome(tmp_path: Path) -> None:
    codes = {_both(args, tmp_path, stdin)[0].returncode for args, stdin in _cases(tmp_path)}
    assert codes == {0, 1, 2}


def test_a_plain_diagnosis_does_not_import_click(tmp_path: Path) -> None:
    fixture = FIXTURES / "hccl-ei0002-notify-timeout.log"
    lines = [
        ([str(fixture)], False),
        (["--format", "json", str(fixture)], False),
        (["-fjson", str(fixture)], True),
    ]
    for args, imported in lines:
        done, click_imported = run_watching_import("click", args, env=_environment())
        assert done.returncode == 1, done.stderr
        assert click_imported is imported, done.stderr


def test_a_skipped_file_name_cannot_colour_the_terminal(tmp_path: Path) -> None:
    (tmp_path / "esc\x1b[31mname.log").write_bytes(b"\x00\x01\x02" * 100)
    (tmp_path / "clean.log").write_text("training finished\n")
    for command in (ENTRY, CLICK):
        done = subprocess.run(
            [*command, "."], capture_output=True, text=True, cwd=tmp_path, env=_environment()
        )
        assert "skipped ./esc\\x1b[31mname.log: binary" in done.stderr, done.stderr
        assert "\x1b" not in done.stderr
