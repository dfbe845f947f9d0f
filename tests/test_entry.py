"""`ascend-doctor [diagnose] PATH...` skips click for start-up: it must answer exactly as the click
command does, and hand everything it does not fully understand to click."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ascend_doctor.cli import app
from ascend_doctor.entry import COMMANDS, plain_paths
from tests.conftest import FIXTURES

ENTRY = (sys.executable, "-m", "ascend_doctor")
CLICK = (sys.executable, "-c", "import sys; from ascend_doctor.cli import main; main(sys.argv[1:])")
# Options the environment could set, and Actions, which adds annotations: neither may leak in.
SETTINGS = ("ASCEND_DOCTOR_FORMAT", "ASCEND_DOCTOR_FAIL_ON", "GITHUB_ACTIONS")


@pytest.mark.parametrize(
    ("args", "paths"),
    [
        (["train.log"], ["train.log"]),
        (["diagnose", "a.log", "plog/"], ["a.log", "plog/"]),
        (["-"], ["-"]),
        (["diagnose"], []),
        (["logs/diagnose"], ["logs/diagnose"]),
    ],
)
def test_plain_paths_are_diagnosed_directly(args: list[str], paths: list[str]) -> None:
    assert plain_paths(args, {}) == paths


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--help"],
        ["-h"],
        ["--version"],
        ["train.log", "--format", "json"],
        ["diagnose", "-f", "sarif", "train.log"],
        ["diagnose", "--", "-odd-name.log"],
        ["-odd-name.log"],
        ["explain", "EL0004"],
        ["rules", "list"],
    ],
)
def test_options_and_other_commands_go_to_click(args: list[str]) -> None:
    assert plain_paths(args, {}) is None


def test_every_click_command_is_known_to_the_entry_point() -> None:
    """Otherwise `ascend-doctor NEWCOMMAND` would diagnose a file of that name."""
    assert set(COMMANDS) == set(app().commands)


@pytest.mark.parametrize("name", ["ASCEND_DOCTOR_FORMAT", "ASCEND_DOCTOR_FAIL_ON", "_ASCEND_DOCTOR_COMPLETE"])
def test_options_set_in_the_environment_go_to_click(name: str) -> None:
    assert plain_paths(["train.log"], {name: "json"}) is None


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
    probe = (
        "import sys\n"
        "from ascend_doctor.entry import main\n"
        "try:\n"
        "    main()\n"
        "finally:\n"
        "    sys.stderr.write('click imported: %s' % ('click' in sys.modules))\n"
    )
    for args, imported in (([str(fixture)], False), (["--format", "json", str(fixture)], True)):
        done = subprocess.run(
            [sys.executable, "-c", probe, *args], capture_output=True, text=True, env=_environment()
        )
        assert done.returncode == 1, done.stderr
        assert done.stderr.endswith(f"click imported: {imported}"), done.stderr


def test_a_skipped_file_name_cannot_colour_the_terminal(tmp_path: Path) -> None:
    (tmp_path / "esc\x1b[31mname.log").write_bytes(b"\x00\x01\x02" * 100)
    (tmp_path / "clean.log").write_text("training finished\n")
    for command in (ENTRY, CLICK):
        done = subprocess.run(
            [*command, "."], capture_output=True, text=True, cwd=tmp_path, env=_environment()
        )
        assert "skipped ./esc\\x1b[31mname.log: binary" in done.stderr, done.stderr
        assert "\x1b" not in done.stderr
