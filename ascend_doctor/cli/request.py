"""What `diagnose` was asked to do, and the words its command line may use.

Both ways in build a `DiagnoseRequest`: the click command (cli/app.py) from its flags, and the
reader of a plain command line (cli/quick_args.py) without click; cli/diagnose.py runs it. Kept
apart from both so that neither imports the other, and light: it is on every start-up path.
"""

from __future__ import annotations

from typing import NamedTuple

from ascend_doctor.model import STDIN_LABEL

COMMANDS = ("diagnose", "check", "explain", "rules", "run", "merge", "collect")
FAIL_ON = ("error", "warning", "info", "never")
ENGINES = ("auto", "python", "hyperscan")
MAX_JOBS = 64


class DiagnoseRequest(NamedTuple):
    """What `diagnose` was asked to do; the defaults are the command's defaults."""

    paths: tuple[str, ...] = ()
    fmt: str = "text"
    output: str = "-"
    rules_dirs: tuple[str, ...] = ()
    lang: str | None = None
    fail_on: str = "error"
    exit_zero: bool = False
    color: bool | None = None
    stdin_name: str = STDIN_LABEL
    engine: str = "auto"
    jobs: int | None = None
    no_cache: bool = False
    debug: bool = False
    tee: bool = False
    node: str | None = None


DEFAULTS = DiagnoseRequest()
