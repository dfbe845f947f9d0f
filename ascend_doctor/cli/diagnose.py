"""One diagnosis, from a request to an exit code, without click.

The click command parses flags into a `DiagnoseRequest` and calls `run_diagnose`. A plain command
line (paths and the common options, see `quick_args`) skips click entirely: importing it is about
a third of the start-up of a small diagnosis.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Sequence
from contextlib import nullcontext
from typing import Any, TextIO

from ascend_doctor.cli.request import COMMANDS, DiagnoseRequest
from ascend_doctor.config import (
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
from ascend_doctor.match.fast_engine import hyperscan_missing
from ascend_doctor.match.prefilter import require_engine
from ascend_doctor.model import Report
from ascend_doctor.read.progress import byte_progress
from ascend_doctor.read.sources import (
    EMPTY_STDIN,
    SNIFF,
    STDIN,
    InputItem,
    could_not_open,
    expand,
    report_reason,
)
from ascend_doctor.render import RENDERERS
from ascend_doctor.render.base import printable
from ascend_doctor.rulebase.load import RuleBase, load_rulebase

MAX_SKIP_NOTICES = 20
STEP_SUMMARY_LIMIT = 1024 * 1024  # GitHub drops a step's job summary above 1 MiB
# Read by the pure-Python prefilter (~30 MB/s per core), this much took a few seconds that
# hyperscan would have made a fraction of one: worth telling a user who did not pick an engine.
FAST_ENGINE_HINT = 100_000_000


def say(message: str) -> None:
    """A message on stderr. Control characters in it (from a file name or a reason) are shown, not
    sent; its line breaks (a YAML error's context lines) are kept. A closed or full stderr loses
    the message, not the report."""
    stream = sys.stderr
    if stream is None:
        return
    try:
        stream.write("\n".join(printable(line) for line in message.split("\n")) + "\n")
        stream.flush()
    except (OSError, ValueError):  # ValueError: stderr was closed
        return


def run_guarded(request: DiagnoseRequest) -> int:
    """`run_diagnose`, with failures turned into one line on stderr and their exit code."""
    try:
        return run_diagnose(request)
    except BaseException as exc:
        code = failure_code(exc, request.debug)
        if code is None:
            raise
        return code


def failure_code(exc: BaseException, debug: bool) -> int | None:
    """Say why a run failed and return its exit code; None when the exception must propagate
    (`--debug`, or an exit that is not a failure)."""
    if isinstance(exc, KeyboardInterrupt):
        say("\nascend-doctor: interrupted")
        return int(ExitCode.INTERRUPTED)
    if isinstance(exc, BrokenPipeError):
        silence_stdout()
        return int(ExitCode.CLEAN)
    if debug or not isinstance(exc, Exception):
        return None
    if isinstance(exc, AscendDoctorError):
        say(f"ascend-doctor: error: {exc}")
        return int(exc.exit_code)
    if isinstance(exc, OSError):
        silence_stdout()
        say(f"ascend-doctor: error: cannot write the output: {exc.strerror or exc}")
        return int(ExitCode.ERROR)
    say(
        f"ascend-doctor: internal error: {type(exc).__name__}: {exc} "
        "(run again with --debug for the traceback, and please report it)"
    )
    return int(ExitCode.ERROR)


def run_diagnose(request: DiagnoseRequest) -> int:
    """Load the rules, scan the inputs, write the report; the exit code says what was found."""
    require_engine(request.engine)
    rulebase = load_rulebase(request.rules_dirs, use_cache=not request.no_cache)
    targets = _resolve_paths(request.paths)
    items = expand(targets)
    _check_output(request.output, items)
    if STDIN in targets and stdin_is_terminal():
        say("ascend-doctor: reading the log from the terminal: paste it, then press Ctrl-D")
    color = request.color
    if color is None and no_color_requested():
        color = False
    options = ScanOptions(
        engine=request.engine,
        jobs=request.jobs or cpu_count(),
        stdin_name=request.stdin_name,
        lang=request.lang or default_language(),
    )
    with byte_progress() as progress:
        stdin = sys.stdin.buffer if sys.stdin is not None else None
        report = diagnose(targets, rulebase, options, stdin=stdin, progress=progress, items=items)
    _suggest_a_command(request.paths, report)
    _require_something_read(report, implicit_stdin=not request.paths)
    _notify_inputs(report)
    _suggest_fast_engine(report, request.engine)
    code = _exit_code(report, request.fail_on, request.exit_zero, _unreadable_named(report, request.paths))
    try:
        _write(report, request, color, rulebase)
        if request.fmt == "text" and in_github_actions():
            _annotate_github_job(report)
    except BrokenPipeError:
        silence_stdout()
    return int(code)


def _exit_code(report: Report, fail_on: str, exit_zero: bool, unreadable: bool) -> ExitCode:
    """2 when a path named on the command line could not be read (whatever was found in the others
    and whatever --exit-zero says: a mistyped or vanished path must not pass unseen); else 1 when a
    finding reaches --fail-on, unless --exit-zero."""
    if unreadable:
        return ExitCode.ERROR
    if exit_zero:
        return ExitCode.CLEAN
    found = any(finding.rule.severity.fails(fail_on) for finding in report.findings)
    return ExitCode.FOUND if found else ExitCode.CLEAN


def _unreadable_named(report: Report, paths: Sequence[str]) -> bool:
    """Whether a path named on the command line (a file, or a directory itself) could not be read."""
    named = {InputItem(path, True).label for path in paths}
    return any(
        record.skipped and record.path in named and could_not_open(record.reason) for record in report.inputs
    )


def _notify_inputs(report: Report) -> None:
    """Say on stderr what was skipped and what was noted."""
    skipped = [record for record in report.inputs if record.skipped]
    for record in skipped[:MAX_SKIP_NOTICES]:
        say(f"ascend-doctor: skipped {record.path}: {record.reason}")
    if len(skipped) > MAX_SKIP_NOTICES:
        say(
            f"ascend-doctor: ... and {len(skipped) - MAX_SKIP_NOTICES} more skipped "
            "(see --format json for the full list)"
        )
    for record in report.inputs:
        for note in record.notes:
            say(f"ascend-doctor: note: {record.path}: {note}")
    for warning in report.warnings:
        say(f"ascend-doctor: warning: {warning}")


def _suggest_fast_engine(report: Report, engine: str) -> None:
    """Tell a user who read a big input without hyperscan why it was absent: it reads ~10x faster."""
    if engine != "auto":
        return
    size = sum(record.size for record in report.inputs)
    if size < FAST_ENGINE_HINT:
        return
    reason = hyperscan_missing()
    if reason is None:
        return
    say(
        f"ascend-doctor: note: {size / 1e6:,.0f} MB were read without hyperscan, at about 30 MB/s "
        f"per core, where hyperscan reads about ten times faster with the same findings: {reason}"
    )


def _suggest_a_command(paths: Sequence[str], report: Report) -> None:
    """A mistyped command (`explian EL0004`) was taken for a missing file: name the command."""
    missing = [record.path for record in report.inputs if record.reason == "no such file or directory"]
    if not paths or paths[0] not in missing:
        return
    from difflib import get_close_matches

    for command in get_close_matches(paths[0], COMMANDS, n=1):
        say(
            f"ascend-doctor: '{paths[0]}' is not a file or a command; did you mean 'ascend-doctor {command}'?"
        )


def _require_something_read(report: Report, implicit_stdin: bool) -> None:
    """Nothing readable at all is an input error, not an empty report."""
    if any(not record.skipped for record in report.inputs):
        return
    if not report.inputs:  # only directories with no file in them
        raise InputError("nothing to read: no file was found in the directories given")
    if len(report.inputs) == 1:
        record = report.inputs[0]
        if implicit_stdin and record.reason == EMPTY_STDIN:  # a CI step with no path and no pipe
            raise InputError(
                "no log given, and nothing came in on standard input: pass a log file or directory, "
                "or '-' with a pipe"
            )
        raise InputError(f"cannot read {record.path}: {record.reason}")
    _notify_inputs(report)
    raise InputError(f"nothing to read: all {len(report.inputs)} input(s) were skipped")


def _check_output(output: str, items: Sequence[InputItem]) -> None:
    """Refuse, before a long scan, an output that cannot be written or must not be. `-o` naming a
    file that is to be read (by its name, through a link, or in a directory scanned) would replace
    a log with its report. An empty file, or a report of an earlier run found in a directory, may
    be replaced: the scan skips both."""
    if output == "-":
        return
    try:
        info = os.stat(output)
    except OSError:
        return
    if stat.S_ISDIR(info.st_mode):
        raise InputError(f"cannot write {output}: it is a directory")
    for item in items:
        if item.identity == (info.st_dev, info.st_ino) and not item.skip_reason and not _earlier_report(item):
            raise InputError(f"the output {output} is one of the logs to diagnose: choose another --output")


def _earlier_report(item: InputItem) -> bool:
    try:
        with open(item.path, "rb") as handle:
            return bool(report_reason(item, handle.read(SNIFF)))
    except OSError:
        return False


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
    say(f"ascend-doctor: scanning {', '.join(places)}")
    return places


def _write(report: Report, request: DiagnoseRequest, color: bool | None, rulebase: RuleBase) -> None:
    to_stdout = request.output == "-"
    if color is None:  # colour for a terminal only; --color also into a pipe or a file
        color = to_stdout and sys.stdout is not None and sys.stdout.isatty()
    renderer = _renderer(request.fmt, color, request.fail_on, rulebase)
    if to_stdout:
        _write_stdout(renderer, report)
        return
    try:
        with open(request.output, "w", encoding="utf-8") as handle:
            renderer.render(report, handle)
    except OSError as exc:
        raise InputError(f"cannot write {request.output}: {exc.strerror or exc}") from None


def _write_stdout(renderer: Any, report: Report) -> None:
    stream: TextIO | None = sys.stdout
    if stream is None:
        raise InputError("cannot write the report: standard output is closed (use -o FILE)")
    # In Actions the text report is the job log: a path, or a log line wrapped at the terminal
    # width, could start a line with `::` and run as a workflow command.
    actions_log = renderer.name == "text" and in_github_actions()
    try:
        with _commands_stopped(stream) if actions_log else nullcontext():
            renderer.render(report, stream)
        stream.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:  # a full disk, or a device that refuses writes
        silence_stdout()
        raise InputError(f"cannot write the report to standard output: {exc.strerror or exc}") from None


def _commands_stopped(stream: TextIO) -> Any:
    from ascend_doctor.render.github import commands_stopped

    return commands_stopped(stream)


def _renderer(fmt: str, color: bool, fail_on: str, rulebase: RuleBase) -> Any:
    renderer_class = RENDERERS[fmt]
    options = {"text": {"color": color}, "sarif": {"rules": rulebase.rules}, "junit": {"fail_on": fail_on}}
    return renderer_class(**options.get(renderer_class.name, {}))


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
        say(f"ascend-doctor: warning: cannot write the job summary {summary}: {exc.strerror or exc}")


def silence_stdout() -> None:
    """After EPIPE, point stdout at /dev/null so the interpreter's final flush stays quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout already closed or replaced
        return
