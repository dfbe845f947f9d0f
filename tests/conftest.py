"""Shared helpers: run the CLI as a user would, with stdout and stderr kept apart."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

# Before the package is imported: its regexes read their cached code then, and write it at exit,
# after the session's own cache (below) is gone; neither touches the user's cache. Made once per
# session (this module is imported again as `tests.conftest`, and by the scripts tests run) and
# removed after that write (exit handlers run last registered first).
if "ASCEND_DOCTOR_TESTS_CACHE" not in os.environ:
    os.environ["ASCEND_DOCTOR_TESTS_CACHE"] = tempfile.mkdtemp(prefix="ascend-doctor-tests-")
    atexit.register(shutil.rmtree, os.environ["ASCEND_DOCTOR_TESTS_CACHE"], ignore_errors=True)
os.environ["XDG_CACHE_HOME"] = os.environ["ASCEND_DOCTOR_TESTS_CACHE"]

from ascend_doctor.cli.app import app

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"


def run_cli(*args: str, stdin: str | bytes | None = None, env: dict[str, str] | None = None) -> Result:
    """Invoke `ascend-doctor ARGS...` in-process; stdout and stderr are separate."""
    return _runner().invoke(app(), list(args), input=stdin, env=env, catch_exceptions=False)


def _runner() -> CliRunner:
    try:  # click < 8.2 mixes stderr into stdout unless told not to
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:
        return CliRunner()


def diagnose_json(*args: str, stdin: str | bytes | None = None) -> tuple[dict[str, Any], Result]:
    result = run_cli("diagnose", "--format", "json", *args, stdin=stdin)
    assert result.exit_code in (0, 1), result.stderr
    return json.loads(result.stdout), result


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test session gets its own rule cache, so a stale one never hides a broken rule."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))


@pytest.fixture
def stopped_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """`rules test` times each example and warns of a slow one: with its clock stopped, a busy
    machine cannot make an example look slow."""
    from ascend_doctor.match import selfcheck

    monkeypatch.setattr(selfcheck, "_clock", lambda: 0.0)
