"""`ascend-doctor run -- CMD`: run a job with its output passed through live, scanned as it
streams, and diagnosed with the CANN logs it wrote once it ends. The exit status is the job's."""

from __future__ import annotations

import os
import shlex
import sys
import time
from collections.abc import Sequence
from contextlib import ExitStack
from typing import Any, NamedTuple

import click

from ascend_doctor import regexes
from ascend_doctor.cli.diagnose import failure_code, notify_inputs, say, write_report
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
from ascend_doctor.cli.request import DiagnoseRequest
from ascend_doctor.config import DIAGNOSE_ENVIRONMENT, default_language, job_log_places
from ascend_doctor.engine import ScanOptions, diagnose
from ascend_doctor.errors import ConfigError
from ascend_doctor.match.prefilter import require_engine
from ascend_doctor.model import InputRecord, Report
from ascend_doctor.read.sources import EMPTY_STDIN, STDIN, InputItem
from ascend_doctor.render import RENDERERS
from ascend_doctor.rulebase.load import RuleBase, load_rulebase
from ascend_doctor.watch.child import exit_status, how_it_ended, watched
from ascend_doctor.watch.output import ChildOutput, open_log
from ascend_doctor.watch.passthrough import PassThrough
from ascend_doctor.watch.plogs import written_since

OUTPUT_LABEL = "<output>"
SHOWN_PLOGS = 5

RUN_HELP = """Run CMD, show its output live, and diagnose it when it ends.

\b
CMD's stdout and stderr reach ours unchanged as it prints them, each on its
own stream, and are scanned as they stream (in bounded memory, however long
the job). CMD reads our stdin. It writes to pipes, not to a terminal: a tool
that colours only a terminal needs to be told (`--color=always`, FORCE_COLOR=1).

\b
When CMD ends, the CANN logs it wrote ($ASCEND_PROCESS_LOG_PATH, else
~/ascend/log and /root/ascend/log: files changed since it started) are
diagnosed with its output, and the report goes to stderr (or -o FILE): always
when CMD failed; when it succeeded, only if something at or above --fail-on was
found (else one line says so). Under GitHub Actions the text report also
annotates the job and fills the job summary.

\b
Ctrl-C and SIGTERM go to CMD's whole process group (torchrun's workers too);
the report for what it printed is still written.
"""

RUN_EPILOG = """\b
Examples:
  ascend-doctor run -- torchrun --nproc-per-node 8 train.py
  ascend-doctor run --log train.log.gz -- msrun --worker_num 8 train.py
  ascend-doctor run -f gitlab -o gl-code-quality.json -- bash launch.sh

\b
Exit status: CMD's own (128+N when a signal N ended it), so `run` can wrap any
CI step; 0 with --exit-zero. 127 CMD not found, 126 not executable, 2 usage
error or broken rule file (CMD is not started).
"""


class RunRequest(NamedTuple):
    """What `run` was asked to do: the command, where to save its output, whether to read the
    plogs, and how to diagnose and report (`paths` unused)."""

    command: tuple[str, ...]
    diagnosis: DiagnoseRequest
    log: str | None = None
    plogs: bool = True


@click.command(
    "run",
    help=RUN_HELP,
    epilog=RUN_EPILOG,
    short_help="Run a job, show its output live, diagnose it when it ends.",
    context_settings={"allow_interspersed_args": False},
)
@click.argument("command", nargs=-1, required=True, metavar="-- CMD [ARGS]...")
@format_option(sorted(RENDERERS), envvar=DIAGNOSE_ENVIRONMENT["fmt"])
@output_option(screen="stderr")
@click.option("--log", metavar="FILE", help="Also save the output to FILE (gzip if it ends in .gz).")
@click.option("--no-plogs", is_flag=True, help="Do not read the CANN logs written during the run.")
@rules_option()
@lang_option()
@fail_on_option("gets a report when CMD succeeded", envvar=DIAGNOSE_ENVIRONMENT["fail_on"])
@exit_zero_option("a broken rule file", exits="Exit 0 whatever CMD's status; the report is still written")
@color_option()
@engine_option()
@no_cache_option()
@debug_option()
def run_command(command: tuple[str, ...], log: str | None, no_plogs: bool, **options: Any) -> None:
    sys.exit(run_job(RunRequest(command, DiagnoseRequest(**options), log, not no_plogs)))


def run_job(request: RunRequest) -> int:
    """Run the command and diagnose it; the exit code is the command's (see RUN_EPILOG)."""
    diagnosis = request.diagnosis
    require_engine(diagnosis.engine)
    rulebase = load_rulebase(diagnosis.rules_dirs, use_cache=not diagnosis.no_cache)
    if diagnosis.no_cache:
        regexes.forget()
    _check_files(request)
    options = ScanOptions(
        engine=diagnosis.engine,
        stdin_name=request.log or OUTPUT_LABEL,
        lang=diagnosis.lang or default_language(),
    )
    report, returncode, left_open = _watch(request, rulebase, options)
    code = 0 if diagnosis.exit_zero else exit_status(returncode)
    try:
        _tell(request, report, returncode, left_open, rulebase)
    except Exception as exc:  # the job's status stands; a report we could not write fails a job that passed
        error = failure_code(exc, diagnosis.debug)
        if error is None:
            raise
        return code or error
    return code


def _watch(request: RunRequest, rulebase: RuleBase, options: ScanOptions) -> tuple[Report, int, bool]:
    """(the report, the command's return code, whether a process it left behind held its output
    open after it ended)."""
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()  # what we wrote before goes before the job's output
    started = time.time()
    with ExitStack() as stack:
        log = stack.enter_context(_opened_log(request.log)) if request.log else None
        process, _ = stack.enter_context(watched(request.command))
        output = ChildOutput(process, PassThrough(1), PassThrough(2), log)

        def plogs() -> list[str]:
            output.drain()
            process.wait()
            return written_since(started, job_log_places()) if request.plogs else []

        items = [InputItem(STDIN, True)]
        report = diagnose([STDIN], rulebase, options, stdin=output, items=items, later=plogs)
        if output.log_error:
            say(f"ascend-doctor: warning: stopped writing {request.log}: {output.log_error}")
    return _empty_output_named(report), process.wait(), output.left_open


def _opened_log(path: str) -> Any:
    try:
        return open_log(path)
    except OSError as exc:
        raise ConfigError(f"cannot write --log {path}: {exc.strerror or exc}") from None


def _check_files(request: RunRequest) -> None:
    """Refuse, before the command starts, a report and a log in one file, or a report a directory."""
    output = request.diagnosis.output
    if output != "-" and os.path.isdir(output):
        raise ConfigError(f"cannot write {output}: it is a directory")
    if request.log and output != "-" and os.path.realpath(output) == os.path.realpath(request.log):
        raise ConfigError(f"-o {output} and --log name the same file: choose another")


def _empty_output_named(report: Report) -> Report:
    """`run`'s input is the command's output, not standard input: say so when it printed nothing."""
    inputs = tuple(
        record._replace(reason="the command printed nothing") if record.reason == EMPTY_STDIN else record
        for record in report.inputs
    )
    return report._replace(inputs=inputs)


def _tell(request: RunRequest, report: Report, returncode: int, left_open: bool, rulebase: RuleBase) -> None:
    """How the command ended, which plogs were read, then the report: in full when the command
    failed or a finding reaches --fail-on (or a file or a machine format was asked for), else one
    line."""
    diagnosis = request.diagnosis
    name = _shown_command(request.command)
    if left_open:
        say(f"ascend-doctor: note: {name} ended, but a process it started held its output open: not read")
    plogs = [record for record in report.inputs[1:] if not record.skipped]
    found = any(finding.rule.severity.fails(diagnosis.fail_on) for finding in report.findings)
    if returncode == 0 and not found and diagnosis.output == "-" and diagnosis.fmt == "text":
        lines = report.inputs[0].lines if report.inputs else 0
        say(
            f"ascend-doctor: {name} {how_it_ended(returncode)}; no failure found "
            f"at or above --fail-on {diagnosis.fail_on} in its {lines:,} lines of output{_plogs_read(plogs)}"
        )
        return
    say(f"ascend-doctor: {name} {how_it_ended(returncode)}")
    if request.plogs:
        say(_plogs_line(plogs))
    notify_inputs(report)
    write_report(report, diagnosis, rulebase.rules, sys.stderr)


def _plogs_read(plogs: Sequence[InputRecord]) -> str:
    return f" or in the {len(plogs)} CANN log file(s) it wrote" if plogs else ""


def _plogs_line(plogs: Sequence[InputRecord]) -> str:
    if not plogs:
        places = ", ".join(job_log_places()) or "none of $ASCEND_PROCESS_LOG_PATH, ~/ascend/log exists"
        return f"ascend-doctor: no CANN log file was written during the run ({places})"
    names = ", ".join(record.path for record in plogs[:SHOWN_PLOGS])
    more = f" and {len(plogs) - SHOWN_PLOGS} more" if len(plogs) > SHOWN_PLOGS else ""
    return f"ascend-doctor: read {len(plogs)} CANN log file(s) written during the run: {names}{more}"


def _shown_command(command: Sequence[str], width: int = 60) -> str:
    text = shlex.join(command)
    return f"`{text}`" if len(text) <= width else f"`{text[: width - 1]}…`"


__all__ = ["RunRequest", "run_command", "run_job"]
