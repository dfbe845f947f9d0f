"""The command line: flags -> engine -> renderer -> exit code. No diagnosis logic here."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from contextlib import nullcontext
from typing import Any, TextIO

import click

from ascend_doctor import __version__
from ascend_doctor.config import (
    LANGUAGES,
    cpu_count,
    default_language,
    default_log_places,
    github_step_summary,
    in_github_actions,
    no_color_requested,
    stdin_is_terminal,
)
from ascend_doctor.engine import ScanOptions, diagnose
from ascend_doctor.errors import AscendDoctorError, ExitCode, InputError
from ascend_doctor.model import Report, Severity
from ascend_doctor.progress import byte_progress
from ascend_doctor.render import RENDERERS
from ascend_doctor.rulebase import RuleBase, load_rulebase
from ascend_doctor.sources import STDIN

FAIL_ON = ("error", "warning", "info", "never")
DEBUG_KEY = "ascend_doctor.debug"
MAX_SKIP_NOTICES = 20
STEP_SUMMARY_LIMIT = 1024 * 1024  # GitHub drops a step's job summary above 1 MiB
DIAGNOSE_EPILOG = """\b
Examples:
  ascend-doctor diagnose train.log
  python train.py 2>&1 | ascend-doctor -
  ascend-doctor diagnose logs/ ~/ascend/log/debug/plog --format json -o report.json
  ascend-doctor diagnose train.log --format sarif -o ascend.sarif --exit-zero   # for CI upload
  ascend-doctor diagnose            # no path: the CANN log places ($ASCEND_PROCESS_LOG_PATH,
                                    # ~/ascend/log, /root/ascend/log, /var/log/npu/slog)

\b
Exit codes: 0 nothing to fix found, 1 a cause was found (at or above --fail-on),
2 usage error / unreadable input / broken rule file, 130 interrupted.
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
        except AscendDoctorError as exc:
            if ctx.meta.get(DEBUG_KEY):
                raise
            click.echo(f"ascend-doctor: error: {exc}", err=True)
            ctx.exit(int(exc.exit_code))
        except KeyboardInterrupt:
            click.echo("\nascend-doctor: interrupted", err=True)
            ctx.exit(int(ExitCode.INTERRUPTED))
        except BrokenPipeError:
            silence_stdout()
            ctx.exit(int(ExitCode.CLEAN))
        except (click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except OSError as exc:
            if ctx.meta.get(DEBUG_KEY):
                raise
            silence_stdout()
            click.echo(f"ascend-doctor: error: cannot write the output: {exc.strerror or exc}", err=True)
            ctx.exit(int(ExitCode.ERROR))
        except Exception as exc:
            if ctx.meta.get(DEBUG_KEY):
                raise
            click.echo(
                f"ascend-doctor: internal error: {type(exc).__name__}: {exc} "
                "(run again with --debug for the traceback, and please report it)",
                err=True,
            )
            ctx.exit(int(ExitCode.ERROR))


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
      python train.py 2>&1 | ascend-doctor -
      ascend-doctor explain EL0004
      ascend-doctor rules list
    """


def _load_rules(rules_dirs: Sequence[str], use_cache: bool = True) -> RuleBase:
    return load_rulebase(rules_dirs, use_cache=use_cache)


def _exit_code(report: Report, fail_on: str, exit_zero: bool, missing: bool) -> ExitCode:
    if missing:
        return ExitCode.ERROR
    if exit_zero or fail_on == "never":
        return ExitCode.CLEAN
    threshold = Severity(fail_on).weight
    found = any(f.rule.severity.weight >= threshold for f in report.findings)
    return ExitCode.FOUND if found else ExitCode.CLEAN


def _notify_inputs(report: Report) -> bool:
    """Say on stderr what was skipped and what was noted; True if a named input was missing."""
    skipped = [record for record in report.inputs if record.skipped]
    for record in skipped[:MAX_SKIP_NOTICES]:
        click.echo(f"ascend-doctor: skipped {record.path}: {record.reason}", err=True)
    if len(skipped) > MAX_SKIP_NOTICES:
        click.echo(
            f"ascend-doctor: ... and {len(skipped) - MAX_SKIP_NOTICES} more skipped "
            "(see --format json for the full list)",
            err=True,
        )
    for record in report.inputs:
        for note in record.notes:
            click.echo(f"ascend-doctor: note: {record.path}: {note}", err=True)
    for warning in report.warnings:
        click.echo(f"ascend-doctor: warning: {warning}", err=True)
    return any(r.reason == "no such file or directory" for r in skipped)


def _require_something_read(report: Report) -> None:
    """Nothing readable at all is an input error, not an empty report."""
    if any(not record.skipped for record in report.inputs):
        return
    if len(report.inputs) == 1:
        record = report.inputs[0]
        raise InputError(f"cannot read {record.path}: {record.reason}")
    _notify_inputs(report)
    raise InputError(f"nothing to read: all {len(report.inputs)} input(s) were skipped")


def _resolve_paths(paths: Sequence[str]) -> list[str]:
    if paths:
        return list(paths)
    if not stdin_is_terminal():
        return [STDIN]
    places = default_log_places()
    if not places:
        raise InputError(
            "no log given and no CANN log directory found "
            "($ASCEND_PROCESS_LOG_PATH, ~/ascend/log, /root/ascend/log, /var/log/npu/slog); "
            "pass a file, a directory or '-' for stdin"
        )
    click.echo(f"ascend-doctor: scanning {', '.join(places)}", err=True)
    return places


def _total_size(paths: Sequence[str]) -> int | None:
    total = 0
    for path in paths:
        if path == STDIN:
            return None
        if os.path.isfile(path):
            total += os.path.getsize(path)
        elif os.path.isdir(path):
            for root, _, files in os.walk(path):
                total += sum(
                    os.path.getsize(os.path.join(root, f))
                    for f in files
                    if os.path.isfile(os.path.join(root, f))
                )
    return total


def _write(report: Report, fmt: str, output: str, color: bool | None, rulebase: RuleBase) -> None:
    renderer_class = RENDERERS[fmt]
    if output == "-":
        _write_stdout(renderer_class, report, color, rulebase)
        return
    try:
        with open(output, "w", encoding="utf-8") as handle:
            _render(renderer_class, report, handle, False, rulebase)
    except OSError as exc:
        raise InputError(f"cannot write {output}: {exc.strerror or exc}") from None


def _write_stdout(renderer_class: Any, report: Report, color: bool | None, rulebase: RuleBase) -> None:
    stream: TextIO | None = sys.stdout
    if stream is None:
        raise InputError("cannot write the report: standard output is closed (use -o FILE)")
    use_color = stream.isatty() if color is None else color
    # In Actions the text report is the job log: a path, or a log line wrapped at the terminal
    # width, could start a line with `::` and run as a workflow command.
    actions_log = renderer_class.name == "text" and in_github_actions()
    try:
        with _commands_stopped(stream) if actions_log else nullcontext():
            _render(renderer_class, report, stream, use_color, rulebase)
        stream.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:  # a full disk, or a device that refuses writes
        silence_stdout()
        raise InputError(f"cannot write the report to standard output: {exc.strerror or exc}") from None


def _commands_stopped(stream: TextIO) -> Any:
    from ascend_doctor.render.github import commands_stopped

    return commands_stopped(stream)


def _render(renderer_class: Any, report: Report, stream: TextIO, color: bool, rulebase: RuleBase) -> None:
    options = {"text": {"color": color}, "sarif": {"rules": rulebase.rules}}.get(renderer_class.name, {})
    renderer_class(**options).render(report, stream)


def _annotate_github_job(report: Report) -> None:
    """In GitHub Actions the text report also annotates the job and appends the job summary."""
    RENDERERS["github"]().render(report, sys.stdout)
    summary = github_step_summary()
    if not summary:
        return
    try:
        with open(summary, "a", encoding="utf-8") as handle:
            room = max(0, STEP_SUMMARY_LIMIT - os.fstat(handle.fileno()).st_size)
            RENDERERS["markdown"](max_bytes=room).render(report, handle)
    except OSError as exc:
        message = f"cannot write the job summary {summary}: {exc.strerror or exc}"
        click.echo(f"ascend-doctor: warning: {message}", err=True)


@cli.command("diagnose", epilog=DIAGNOSE_EPILOG)
@click.argument("paths", nargs=-1, metavar="[PATH|-]...")
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(sorted(RENDERERS)),
    default="text",
    envvar="ASCEND_DOCTOR_FORMAT",
    show_default=True,
    help="Report format.",
)
@click.option("-o", "--output", default="-", metavar="FILE", help="Write the report to FILE ('-' = stdout).")
@click.option(
    "--rules",
    "rules_dirs",
    multiple=True,
    metavar="DIR",
    help="Also load the rule files (*.yaml) in DIR; repeatable. See docs/rule-format.md.",
)
@click.option(
    "--lang",
    type=click.Choice(LANGUAGES),
    default=None,
    help="Language of the report (default: from LC_ALL/LANG).",
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    default="error",
    show_default=True,
    envvar="ASCEND_DOCTOR_FAIL_ON",
    help="Lowest severity that makes the exit code 1.",
)
@click.option("--exit-zero", is_flag=True, help="Report findings but exit 0.")
@click.option(
    "--color/--no-color",
    default=None,
    help="Force colour on or off (default: on for a terminal; NO_COLOR is honoured).",
)
@click.option(
    "--stdin-name",
    default="<stdin>",
    show_default=True,
    help="Name shown for input read from stdin.",
)
@click.option(
    "--engine",
    type=click.Choice(["auto", "python", "hyperscan"]),
    default="auto",
    show_default=True,
    help="Prefilter engine; 'auto' uses hyperscan when installed. Findings are identical.",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(1, 64),
    default=None,
    help="Worker processes for many files, or for a log over 64 MB scanned in parts (default: CPU count).",
)
@click.option("--no-cache", is_flag=True, help="Do not use the compiled rule cache.")
@click.option("--debug", is_flag=True, help="Show tracebacks for internal errors.")
def diagnose_command(
    paths: tuple[str, ...],
    fmt: str,
    output: str,
    rules_dirs: tuple[str, ...],
    lang: str | None,
    fail_on: str,
    exit_zero: bool,
    color: bool | None,
    stdin_name: str,
    engine: str,
    jobs: int | None,
    no_cache: bool,
    debug: bool,
) -> None:
    """Diagnose log files, directories (CANN plog trees included) or stdin ('-')."""
    click.get_current_context().meta[DEBUG_KEY] = debug
    rulebase = _load_rules(rules_dirs, use_cache=not no_cache)
    targets = _resolve_paths(paths)
    if color is None and no_color_requested():
        color = False
    options = ScanOptions(
        engine=engine,
        jobs=jobs or cpu_count(),
        stdin_name=stdin_name,
        lang=lang or default_language(),
    )
    with byte_progress(lambda: _total_size(targets), enabled=fmt == "text" or output != "-") as progress:
        stdin = sys.stdin.buffer if sys.stdin is not None else None
        report = diagnose(targets, rulebase, options, stdin=stdin, progress=progress)
    _require_something_read(report)
    missing = _notify_inputs(report)
    code = _exit_code(report, fail_on, exit_zero, missing)
    try:
        _write(report, fmt, output, color, rulebase)
        if fmt == "text" and in_github_actions():
            _annotate_github_job(report)
    except BrokenPipeError:
        silence_stdout()
    sys.exit(int(code))


def app() -> click.Group:
    """The full command group; the other command groups attach themselves when imported."""
    from ascend_doctor import cli_explain, cli_rules  # noqa: F401

    return cli


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point."""
    args = list(sys.argv[1:] if argv is None else argv)
    # A diagnosis needs none of the other command groups: importing them (YAML, the knowledge
    # base, regex) costs ~30 ms of start-up on every run.
    other = args[:1] in (["explain"], ["rules"]) or {"-h", "--help", "--version"} & set(args)
    quick = bool(args) and not other
    (cli if quick else app()).main(args=args, prog_name="ascend-doctor")


def silence_stdout() -> None:
    """After EPIPE, point stdout at /dev/null so the interpreter's final flush stays quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout already closed or replaced
        return
