"""The click command line: flags -> DiagnoseRequest -> diagnose.run_diagnose -> exit code. Every
command's failures go through diagnose.failure_code. No diagnosis logic here."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import click

from ascend_doctor import __version__
from ascend_doctor.cli.diagnose import failure_code, run_diagnose
from ascend_doctor.cli.options import (
    color_option,
    debug_option,
    engine_option,
    exit_zero_option,
    fail_on_option,
    format_option,
    lang_option,
    no_cache_option,
    output_option,
    rules_option,
)
from ascend_doctor.cli.request import DEFAULTS, MAX_JOBS, DiagnoseRequest
from ascend_doctor.config import DIAGNOSE_ENVIRONMENT, stdin_is_terminal
from ascend_doctor.read.sources import STDIN
from ascend_doctor.render import RENDERERS

DEBUG_KEY = "ascend_doctor.debug"
LANG_KEY = "ascend_doctor.lang"
DIAGNOSE_EPILOG = """\b
Examples:
  ascend-doctor diagnose train.log
  python train.py 2>&1 | ascend-doctor -
  set -o pipefail; python train.py 2>&1 | ascend-doctor - --tee   # the log shown as it comes
  ascend-doctor diagnose logs/ ~/ascend/log/debug/plog --format json -o report.json
  ascend-doctor diagnose train.log --format sarif -o ascend.sarif --exit-zero   # for CI upload
  ascend-doctor diagnose            # no path: the CANN log places ($ASCEND_PROCESS_LOG_PATH,
                                    # ~/ascend/log, /root/ascend/log, /var/log/npu/slog)

\b
Exit codes: 0 nothing to fix found, 1 a cause was found (at or above --fail-on),
2 usage error, broken rule file, a path given that cannot be read (missing, no
permission, broken link) or nothing readable at all: 2 wins over 1 and over
--exit-zero, and the report is still written for what was read. Files that are
not logs (binary, empty) and files skipped inside a directory are listed but
change no code. 130 interrupted.
"""


class _DefaultsToDiagnose(click.Group):
    """`ascend-doctor train.log` and `ascend-doctor -` mean `ascend-doctor diagnose ...`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            args = ["diagnose", *args]
        elif not args and not stdin_is_terminal():
            args = ["diagnose", STDIN]
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        """One clear line instead of a traceback; 130 on Ctrl-C; quiet on a closed pipe."""
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except BaseException as exc:
            code = failure_code(exc, ctx.meta.get(DEBUG_KEY, False), ctx.meta.get(LANG_KEY))
            if code is None:
                raise
            ctx.exit(code)


@click.group(cls=_DefaultsToDiagnose, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ascend-doctor")
def cli() -> None:
    """Diagnose Huawei Ascend NPU job failures from their logs.

    \b
    Reads training logs, piped output and CANN plog directories, and prints the
    ranked causes with the evidence lines, the fix and the environment variables to set.

    \b
    Examples:
      ascend-doctor diagnose train.log
      ascend-doctor run -- torchrun --nproc-per-node 8 train.py
      python train.py 2>&1 | ascend-doctor -
      ascend-doctor explain EL0004
      ascend-doctor rules list
    """


@cli.command("diagnose", epilog=DIAGNOSE_EPILOG)
@click.argument("paths", nargs=-1, metavar="[PATH|-]...")
@format_option(sorted(RENDERERS), envvar=DIAGNOSE_ENVIRONMENT["fmt"])
@output_option()
@rules_option()
@lang_option()
@fail_on_option(envvar=DIAGNOSE_ENVIRONMENT["fail_on"])
@exit_zero_option("a path that cannot be read")
@color_option()
@click.option(
    "--stdin-name",
    default=DEFAULTS.stdin_name,
    show_default=True,
    help="Name shown for input read from stdin.",
)
@engine_option()
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(1, MAX_JOBS),
    default=None,
    help="Worker processes for many files, or for a log over 64 MB scanned in parts (default: CPU count; "
    "one where the system cannot fork).",
)
@click.option(
    "--tee",
    is_flag=True,
    help="Copy the log read from stdin ('-') to stdout as it arrives, unchanged; the report goes to "
    "stderr (or -o FILE).",
)
@no_cache_option()
@debug_option()
@click.option(
    "--node",
    metavar="NAME",
    default=None,
    help="The machine the logs come from, as the JSON report names it for `merge` (default: host name).",
)
def diagnose_command(**options: Any) -> None:
    """Diagnose log files, directories (CANN plog trees included) or stdin ('-')."""
    meta = click.get_current_context().meta
    meta[DEBUG_KEY], meta[LANG_KEY] = options["debug"], options["lang"]
    sys.exit(run_diagnose(DiagnoseRequest(**options)))  # the options are named as its fields


def app() -> click.Group:
    """The full command group. The other commands are added here, not by importing this module
    from theirs: commands depend on the group's module never, the group on theirs only here."""
    from ascend_doctor.cli.check import check_command
    from ascend_doctor.cli.collect import collect_command
    from ascend_doctor.cli.explain import explain_command
    from ascend_doctor.cli.merge import merge_command
    from ascend_doctor.cli.rules import rules_group
    from ascend_doctor.cli.run import run_command

    cli.add_command(check_command)
    cli.add_command(explain_command)
    cli.add_command(rules_group)
    cli.add_command(run_command)
    cli.add_command(merge_command)
    cli.add_command(collect_command)
    return cli


def main(argv: Sequence[str] | None = None) -> None:
    """Run the click CLI (entry.main calls it for every command line it does not run directly)."""
    args = list(sys.argv[1:] if argv is None else argv)
    # A diagnosis needs none of the other command groups: importing them (YAML, the knowledge
    # base, regex) costs ~30 ms of start-up on every run.
    other = args[:1] in (["check"], ["explain"], ["rules"], ["run"], ["merge"], ["collect"])
    other = other or bool({"-h", "--help", "--version"} & set(args))
    quick = bool(args) and not other
    (cli if quick else app()).main(args=args, prog_name="ascend-doctor")
