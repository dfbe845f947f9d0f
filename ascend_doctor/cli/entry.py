"""The console-script entry point.

A plain diagnosis (`ascend-doctor [diagnose] PATH... [common options]`, see `quick_args`) runs
without importing click, which is about a third of a small diagnosis's start-up; everything else
goes through the click CLI. A Ctrl-C while either is still being imported ends with one line and
exit 130.
"""

from __future__ import annotations

import os
import sys

from ascend_doctor.errors import ExitCode


def main() -> None:
    """Run a plain diagnosis directly, anything else through the click CLI."""
    try:
        from ascend_doctor.cli.quick_args import quick_request

        request = quick_request(sys.argv[1:], os.environ)
        if request is not None:
            from ascend_doctor.cli.diagnose import run_guarded
        else:
            from ascend_doctor.cli.app import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write("\nascend-doctor: interrupted\n")
        raise SystemExit(int(ExitCode.INTERRUPTED)) from None
    if request is not None:
        sys.exit(run_guarded(request))
    cli_main()
