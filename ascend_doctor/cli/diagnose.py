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

from ascend_doctor import regexes
from ascend_doctor.cli.messages import reason_in, say_in
from ascend_doctor.cli.request import COMMANDS, DiagnoseRequest
from ascend_doctor.config import (
    cpu_count,
    default_language,
    default_log_places,
    github_step_summary,
    in_github_actions,
    no_color_requested,
    node_name,
    stdin_is_terminal,
    utc_offset,
)
from ascend_doctor.engine import ScanOptions, diagnose
from ascend_doctor.errors import AscendDoctorError, ConfigError, ExitCode, InputError
from ascend_doctor.match.fast_engine import hyperscan_missing
from ascend_doctor.match.prefilter import require_engine
from ascend_doctor.model import Report, Rule
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
from ascend_doctor.rulebase.load import load_rulebase
from ascend_doctor.watch.passthrough import PassThrough, TeeInput

MAX_SKIP_NOTICES = 20
STEP_SUMMARY_LIMIT = 1024 * 1024  # GitHub drops a step's job summary above 1 MiB
# Read by the pure-Python prefilter (25-90 MB/s a core), this much takes a few seconds that
# hyperscan would make a fraction of one: worth telling a user who did not pick an engine.
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
        code = failure_code(exc, request.debug, request.lang)
        if code is None:
            raise
        return code


def failure_code(exc: BaseException, debug: bool, lang: str | None = None) -> int | None:
    """Say why a run failed (in `lang`, else the environment's language) and return its exit code;
    None when the exception must propagate (`--debug`, or an exit that is not a failure)."""
    lang = lang or default_language()
    if isinstance(exc, KeyboardInterrupt):
        say(say_in(lang, "interrupted"))
        return int(ExitCode.INTERRUPTED)
    if isinstance(exc, BrokenPipeError):
        silence_stdout()
        return int(ExitCode.CLEAN)
    if debug or not isinstance(exc, Exception):
        return None
    if isinstance(exc, AscendDoctorError):
        say(say_in(lang, "error", message=exc))
        return int(exc.exit_code)
    if isinstance(exc, OSError):
        silence_stdout()
        reason = say_in(lang, "cannot_write_output", reason=exc.strerror or exc)
        say(say_in(lang, "error", message=reason))
        return int(ExitCode.ERROR)
    say(say_in(lang, "internal", error=f"{type(exc).__name__}: {exc}"))
    return int(ExitCode.ERROR)


def run_diagnose(request: DiagnoseRequest) -> int:
    """Load the rules, scan the inputs, write the report; the exit code says what was found."""
    require_engine(request.engine)
    lang = request.lang or default_language()
    _refuse_a_mistyped_command(request.paths, lang)
    rulebase = load_rulebase(request.rules_dirs, use_cache=not request.no_cache)
    if request.no_cache:
        regexes.forget()
    targets = resolve_paths(request.paths, lang)
    items = expand(targets)
    _check_output(request.output, items, lang)
    if STDIN in targets and stdin_is_terminal():
        say(say_in(lang, "terminal"))
    tee = _tee_input(targets) if request.tee else None
    options = ScanOptions(
        engine=request.engine, jobs=request.jobs or cpu_count(), stdin_name=request.stdin_name, lang=lang
    )
    # With --tee, stdout carries the log: a progress bar would be drawn into it.
    with byte_progress() if tee is None else nullcontext() as progress:
        stdin = tee or (sys.stdin.buffer if sys.stdin is not None else None)
        report = diagnose(targets, rulebase, options, stdin=stdin, progress=progress, items=items)
    if tee is not None:
        tee.drain()
    report = report._replace(node=request.node or node_name(), utc_offset=utc_offset())
    require_something_read(report, not request.paths, lang)
    notify_inputs(report, lang)
    _suggest_fast_engine(report, request.engine, lang)
    code = exit_code(report, request.fail_on, request.exit_zero, _unreadable_named(report, request.paths))
    write_report(report, request, rulebase.rules, sys.stderr if tee is not None else sys.stdout)
    return int(code)


def write_report(
    report: Report, request: DiagnoseRequest, rules: Sequence[Rule], screen: TextIO | None
) -> None:
    """Write the report where `request` says (`-o -` meaning `screen`: stdout, or stderr when stdout
    carries the log), and under GitHub Actions the text report's annotations and job summary.
    `rules`: the rule base, which SARIF lists."""
    color = request.color
    if color is None and no_color_requested():
        color = False
    lang = report.lang
    try:
        _write(report, request, color, rules, screen)
        if request.fmt == "text" and in_github_actions():
            _annotate_github_job(report, lang)
    except BrokenPipeError:
        silence_stdout()


def _tee_input(targets: Sequence[str]) -> TeeInput:
    """Standard input, copied to stdout as it is read."""
    if STDIN not in targets:
        raise ConfigError("--tee copies standard input to standard output: read it with '-'")
    if sys.stdout is not None:
        sys.stdout.flush()
    return TeeInput(sys.stdin.fileno(), PassThrough(sys.stdout.fileno()))


def exit_code(report: Report, fail_on: str, exit_zero: bool, unreadable: bool) -> ExitCode:
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


def notify_inputs(report: Report, lang: str = "en") -> None:
    """Say on stderr what was skipped and what was noted."""
    skipped = [record for record in report.inputs if record.skipped]
    for record in skipped[:MAX_SKIP_NOTICES]:
        say(say_in(lang, "skipped", path=record.path, reason=reason_in(lang, record.reason)))
    if len(skipped) > MAX_SKIP_NOTICES:
        say(say_in(lang, "more_skipped", count=len(skipped) - MAX_SKIP_NOTICES))
    for record in report.inputs:
        for note in record.notes:
            say(say_in(lang, "note", path=record.path, note=reason_in(lang, note)))
    for warning in report.warnings:
        say(say_in(lang, "warning", warning=warning))


def _suggest_fast_engine(report: Report, engine: str, lang: str) -> None:
    """Tell a user who read a big input without hyperscan why it was absent: it reads ~10x faster."""
    if engine != "auto":
        return
    size = sum(record.size for record in report.inputs)
    if size < FAST_ENGINE_HINT:
        return
    reason = hyperscan_missing()
    if reason is None:
        return
    say(say_in(lang, "fast_engine", megabytes=size / 1e6, reason=reason))


def _refuse_a_mistyped_command(paths: Sequence[str], lang: str) -> None:
    """A mistyped command (`diag x.log`, `explian EL0004`) would be taken for a missing file and
    the rest diagnosed: it is a usage error naming the command, before anything is read. Only a
    bare word is a command: `rules.log` or `logs/rank0` missing is a missing file."""
    if not paths or not paths[0].isalpha() or os.path.lexists(paths[0]):
        return
    from difflib import get_close_matches

    for command in get_close_matches(paths[0], COMMANDS, n=1):
        raise ConfigError(say_in(lang, "mistyped", word=paths[0], command=command))


def require_something_read(report: Report, implicit_stdin: bool, lang: str = "en") -> None:
    """Nothing readable at all is an input error, not an empty report."""
    if any(not record.skipped for record in report.inputs):
        return
    if not report.inputs:  # only directories with no file in them
        raise InputError(say_in(lang, "no_file_in_dirs"))
    if len(report.inputs) == 1:
        record = report.inputs[0]
        if implicit_stdin and record.reason == EMPTY_STDIN:  # a CI step with no path and no pipe
            raise InputError(say_in(lang, "no_log"))
        raise InputError(say_in(lang, "cannot_read", path=record.path, reason=reason_in(lang, record.reason)))
    notify_inputs(report, lang)
    raise InputError(say_in(lang, "all_skipped", count=len(report.inputs)))


def _check_output(output: str, items: Sequence[InputItem], lang: str) -> None:
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
        raise InputError(say_in(lang, "output_is_dir", path=output))
    for item in items:
        if item.identity == (info.st_dev, info.st_ino) and not item.skip_reason and not _earlier_report(item):
            raise InputError(say_in(lang, "output_is_log", path=output))


def _earlier_report(item: InputItem) -> bool:
    try:
        with open(item.path, "rb") as handle:
            return bool(report_reason(item, handle.read(SNIFF)))
    except OSError:
        return False


def resolve_paths(paths: Sequence[str], lang: str = "en") -> list[str]:
    if paths:
        return list(paths)
    if not stdin_is_terminal():
        return [STDIN]
    places = default_log_places()
    if not places:
        raise InputError(say_in(lang, "no_places"))
    say(say_in(lang, "scanning", places=", ".join(places)))
    return places


def _write(
    report: Report, request: DiagnoseRequest, color: bool | None, rules: Sequence[Rule], screen: TextIO | None
) -> None:
    to_screen = request.output == "-"
    if color is None:  # colour for a terminal only; --color also into a pipe or a file
        color = to_screen and screen is not None and screen.isatty()
    renderer = _renderer(request.fmt, color, request.fail_on, rules)
    if to_screen:
        _write_screen(renderer, report, screen)
        return
    try:
        with open(request.output, "w", encoding="utf-8") as handle:
            renderer.render(report, handle)
    except OSError as exc:
        raise InputError(
            say_in(report.lang, "cannot_write", path=request.output, reason=exc.strerror or exc)
        ) from None


def _write_screen(renderer: Any, report: Report, stream: TextIO | None) -> None:
    names = {"zh": ("标准错误", "标准输出")}.get(report.lang, ("standard error", "standard output"))
    name = names[0] if stream is not None and stream is sys.stderr else names[1]
    if stream is None:
        raise InputError(say_in(report.lang, "stdout_closed", stream=name))
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
        raise InputError(
            say_in(report.lang, "stdout_failed", stream=name, reason=exc.strerror or exc)
        ) from None


def _commands_stopped(stream: TextIO) -> Any:
    from ascend_doctor.render.github import commands_stopped

    return commands_stopped(stream)


def _renderer(fmt: str, color: bool, fail_on: str, rules: Sequence[Rule]) -> Any:
    renderer_class = RENDERERS[fmt]
    options = {"text": {"color": color}, "sarif": {"rules": rules}, "junit": {"fail_on": fail_on}}
    return renderer_class(**options.get(renderer_class.name, {}))


def _annotate_github_job(report: Report, lang: str) -> None:
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
        say(say_in(lang, "no_summary", path=summary, reason=exc.strerror or exc))


def silence_stdout() -> None:
    """After EPIPE, point stdout at /dev/null so the interpreter's final flush stays quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout already closed or replaced
        return
