"""The console-script entry point: Ctrl-C is handled even while the CLI is still being imported."""

from __future__ import annotations

import sys

from ascend_doctor.errors import ExitCode


def main() -> None:
    """Import and run the CLI; a Ctrl-C during the imports ends with one line and exit 130."""
    try:
        from ascend_doctor.cli import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write("\nascend-doctor: interrupted\n")
        raise SystemExit(int(ExitCode.INTERRUPTED)) from None
    cli_main()
