"""The console-script entry point.

`ascend-doctor [diagnose] PATH...` with no option runs the diagnosis without importing click, which
is about a quarter of a small diagnosis's start-up; everything else goes through the click CLI.
A Ctrl-C while either is still being imported ends with one line and exit 130.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

from ascend_doctor.config import DIAGNOSE_ENVIRONMENT
from ascend_doctor.errors import ExitCode

COMMANDS = ("diagnose", "explain", "rules")
COMPLETION_ENVIRONMENT = "_ASCEND_DOCTOR_COMPLETE"  # set by shells asking click for completions


def plain_paths(args: Sequence[str], environ: Mapping[str, str]) -> list[str] | None:
    """The paths of a diagnosis asked for with no option, or None when click must read the command
    line: an option, another command, no argument at all (help, or stdin), or an option set through
    the environment."""
    if args[:1] == ["diagnose"]:
        args = args[1:]
    elif not args or args[0] in COMMANDS:
        return None
    if any(arg.startswith("-") and arg != "-" for arg in args):
        return None
    if COMPLETION_ENVIRONMENT in environ or any(name in environ for name in DIAGNOSE_ENVIRONMENT.values()):
        return None
    return list(args)


def main() -> None:
    """Run a plain diagnosis directly, anything else through the click CLI."""
    paths = plain_paths(sys.argv[1:], os.environ)
    try:
        if paths is not None:
            from ascend_doctor.run import DiagnoseRequest, run_guarded
        else:
            from ascend_doctor.cli import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write("\nascend-doctor: interrupted\n")
        raise SystemExit(int(ExitCode.INTERRUPTED)) from None
    if paths is not None:
        sys.exit(run_guarded(DiagnoseRequest(paths=tuple(paths))))
    cli_main()
