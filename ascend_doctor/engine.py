"""diagnose(): inputs and rules in, a ranked Report out. The only entry point the CLI uses."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any, BinaryIO, NamedTuple, Optional

from ascend_doctor import __version__, outcome, stated_versions, uncaught
from ascend_doctor.gpu_job import as_gpu_job, gpu_only
from ascend_doctor.match.matcher import MAX_TIMEOUTS, PATTERN_TIMEOUT, Matcher
from ascend_doctor.match.parts import Part, open_part, plan
from ascend_doctor.match.pattern_search import alarm_clock
from ascend_doctor.match.scanner import PLOG_PROBE, ScanResult, StreamScanner, keeps_tail, long_lines_note
from ascend_doctor.model import STDIN_LABEL, InputRecord, Match, Report, Rule
from ascend_doctor.ranking import RUN_GAP, EarlierRuns, earlier_runs, rank, waited_for, waits
from ascend_doctor.read import accelerator
from ascend_doctor.read.events import rank_of_path
from ascend_doctor.read.progress import Progress
from ascend_doctor.read.sources import InputItem, expand, open_input
from ascend_doctor.read.tracebacks import TAIL, last_raised
from ascend_doctor.read.world import world_size
from ascend_doctor.rulebase.load import RuleBase

PARALLEL_MIN_BYTES = 16 * 1024 * 1024


class ScanOptions(NamedTuple):
    """How to scan: prefilter engine, worker processes, the label for stdin, report language."""

    engine: str = "auto"
    jobs: int = 1
    stdin_name: str = STDIN_LABEL
    lang: str = "en"


def _scan_item(
    matcher: Matcher,
    item: InputItem,
    index: int,
    label: str,
    stdin: BinaryIO | None,
    progress: Progress | None,
) -> tuple[InputRecord, list[Match]]:
    if item.skip_reason:
        return InputRecord(label, "skipped", item.skip_reason), []
    opened, reason = open_input(item, stdin)
    if opened is None:
        return InputRecord(label, "skipped", reason), []
    scanner = StreamScanner(matcher, label, index, progress)
    notes: list[str] = [opened.note] if opened.note else []
    try:
        result = scanner.scan(opened.stream, opened.first, errors=opened.errors)
    finally:
        if not item.is_stdin:
            opened.closer.close()
    if result.error:
        notes.append(f"stopped reading early, at line {result.lines}: {result.error}")
    if result.long_lines:
        notes.append(long_lines_note(result.long_lines))
    raised = last_raised(result.tail, result.tail_end, label, scanner.path_rank)
    world = _stated_world(matcher.rules, result.matches, result.head, result.tail)
    ascend, gpu = accelerator.signs(result.head, result.tail, plog=result.lines > 0 and not result.head)
    record = InputRecord(
        label, "read", "", result.lines, result.size, tuple(notes), raised, world, ascend, gpu
    )
    return record, result.matches + stated_versions.mismatches(result.head, label, index, scanner.path_rank)


def _stated_world(rules: Sequence[Rule], matches: Sequence[Match], head: bytes, tail: bytes) -> int:
    """The world size an input's first and last bytes state, read only where its ranks timed out
    (it tells which rank never joined)."""
    known = _WAITING.get(id(rules))
    if known is None or known[0] is not rules:
        known = _WAITING[id(rules)] = (rules, frozenset(rule.id for rule in rules if waits(rule)))
    if not any(match.rule_id in known[1] for match in matches):
        return 0
    return world_size(head, tail)


_WAITING: dict[int, tuple[Sequence[Rule], frozenset[str]]] = {}  # the timeout rules of a rule set


_worker_matcher: Matcher | None = None

# A job: an input (or, for a big plain file, one part of it) and the input's index.
_Job = tuple[InputItem, int, Optional[Part]]


def _worker_init(rulebase: RuleBase, engine: str) -> None:
    import signal

    global _worker_matcher
    # Ctrl-C reaches the whole process group: only the parent handles it (and ends the pool);
    # a worker interrupted mid-scan would print its own traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _worker_matcher = Matcher(rulebase.rules, engine, use_cache=getattr(rulebase, "use_cache", True))


def _worker_scan(job: _Job) -> tuple[int, int, Any, int, dict[str, int]]:
    """(input index, part number, what was found, bytes read, pattern time-outs): an InputRecord
    and its matches for a whole input, a ScanResult (or the reason it failed) for a part."""
    assert _worker_matcher is not None
    item, index, part = job
    _worker_matcher.timeouts.clear()
    found: Any
    if part is None:
        found = _scan_item(_worker_matcher, item, index, item.label, None, None)
        size = found[0].size
    else:
        found = _scan_part(_worker_matcher, item, index, part)
        size = found.size if isinstance(found, ScanResult) else 0
    return index, part.number if part else 0, found, size, dict(_worker_matcher.timeouts)


def _worker_scan_chunk(jobs: list[_Job]) -> list[tuple[int, int, Any, int, dict[str, int]]]:
    with alarm_clock():
        return [_worker_scan(job) for job in jobs]


def _scan_part(matcher: Matcher, item: InputItem, index: int, part: Part) -> ScanResult | str:
    """One part of a big plain file, its lines numbered from the part's first line."""
    try:
        opened = open_part(item.path, part)
    except OSError as exc:
        return f"cannot open: {exc.strerror or exc}"
    with opened.stream:
        try:
            return StreamScanner(matcher, item.label, index, tail_wanted=_tail_wanted(item, part)).scan(
                *opened
            )
        except OSError as exc:
            return f"cannot read: {exc.strerror or exc}"


def _tail_wanted(item: InputItem, part: Part) -> bool | None:
    """For a part after the first, whether its file keeps a tail: what the file's own start says
    (a plog or not), not the part's, whose first line may look like one."""
    if part.number == 0:
        return None
    with open(item.path, "rb") as handle:
        return keeps_tail(handle.read(PLOG_PROBE))


def _joined(
    item: InputItem, index: int, results: list[ScanResult | str], rules: Sequence[Rule] = ()
) -> tuple[InputRecord, list[Match]]:
    """The parts of one file as one input: line numbers shifted by the lines of the parts before.
    A part that failed (the reason, as a string) ends the input there, as a failed read would."""
    failed = next((number for number, result in enumerate(results) if isinstance(result, str)), len(results))
    if failed == 0:
        return InputRecord(item.label, "skipped", str(results[0])), []
    matches: list[Match] = []
    lines = size = long_lines = 0
    tail, tail_end = b"", 1
    for result in results[:failed]:
        assert isinstance(result, ScanResult)
        for match in result.matches:
            matches.append(match._replace(evidence=match.evidence._replace(line=match.evidence.line + lines)))
        # The parts' lines follow each other: the last TAIL bytes of the file end with the last part's.
        tail, tail_end = (tail + result.tail)[-TAIL:], lines + result.tail_end
        lines += result.lines
        size += result.size
        long_lines += result.long_lines
    notes = [long_lines_note(long_lines)] if long_lines else []
    if failed < len(results):
        notes.append(f"stopped reading after {size} bytes: {results[failed]}")
    raised = last_raised(tail, tail_end, item.label, rank_of_path(item.label))
    head = results[0].head if isinstance(results[0], ScanResult) else b""
    world = _stated_world(rules, matches, head, tail)
    ascend, gpu = accelerator.signs(head, tail, plog=lines > 0 and not head)
    record = InputRecord(item.label, "read", "", lines, size, tuple(notes), raised, world, ascend, gpu)
    return record, matches + stated_versions.mismatches(head, item.label, index, rank_of_path(item.label))


def _scan_parallel(
    items: Sequence[InputItem],
    jobs: list[_Job],
    rulebase: RuleBase,
    options: ScanOptions,
    progress: Progress | None,
) -> tuple[list[InputRecord], list[Match], dict[str, int]]:
    """Inputs and parts across worker processes, largest first (a big one last would leave a
    core idle); results are put back in input order, so the report does not depend on which
    worker ran what."""
    from ascend_doctor.read.workers import run_tasks  # only here: a scan in one process needs none of it

    jobs = sorted(jobs, key=lambda job: -_job_size(job))
    size = _chunk(len(jobs), options.jobs)
    chunks = [jobs[start : start + size] for start in range(0, len(jobs), size)]
    done: dict[int, dict[int, Any]] = {}
    timeouts: dict[str, int] = {}
    workers = min(options.jobs, len(chunks))
    setup = (rulebase, options.engine)
    for results in run_tasks(_worker_scan_chunk, chunks, workers, _worker_init, setup):
        for index, number, found, read, slow in results:
            done.setdefault(index, {})[number] = found
            for rule_id, count in slow.items():
                timeouts[rule_id] = timeouts.get(rule_id, 0) + count
            if progress is not None:
                progress(read)
    split = {index for _item, index, part in jobs if part is not None}
    ordered = [
        _joined(items[index], index, [done[index][number] for number in sorted(done[index])], rulebase.rules)
        if index in split
        else done[index][0]
        for index in sorted(done)
    ]
    return [record for record, _ in ordered], [m for _, found in ordered for m in found], timeouts


def _chunk(files: int, workers: int) -> int:
    """Jobs per task: one at a time cost thousands of small messages (a 5,000-file tree spent
    a second of the parent's time on them); small enough that workers still finish together."""
    return max(1, min(32, files // (workers * 16)))


def _size(item: InputItem) -> int:
    """The size the directory walk saw, else asked now (0 for what is not read)."""
    if item.skip_reason or item.is_stdin:
        return 0
    if item.size >= 0:
        return item.size
    try:
        return os.path.getsize(item.path)
    except OSError:
        return 0


def _job_size(job: _Job) -> int:
    item, _index, part = job
    if part is None or part.end < 0:
        return _size(item) - (part.start if part else 0)
    return part.end - part.start


def _parallel_jobs(items: Sequence[InputItem], options: ScanOptions) -> list[_Job] | None:
    """The jobs for worker processes, or None when one process is the better choice (one job,
    stdin, which cannot be shared, or too little to read to pay for starting workers) or the only
    one (no `os.fork`: Windows)."""
    if options.jobs < 2 or not hasattr(os, "fork") or any(item.is_stdin for item in items):
        return None
    if sum(_size(item) for item in items) < PARALLEL_MIN_BYTES:
        return None
    jobs: list[_Job] = []
    for index, item in enumerate(items):
        parts = [] if item.skip_reason else plan(item.path, _size(item), options.jobs)
        jobs.extend((item, index, part) for part in parts or [None])
    return jobs if sum(1 for item, _index, _part in jobs if not item.skip_reason) >= 2 else None


def earlier_runs_warning(earlier: EarlierRuns, records: Sequence[InputRecord], lang: str = "en") -> str:
    from datetime import datetime

    start = datetime.fromtimestamp(earlier.latest_start).strftime("%Y-%m-%d %H:%M:%S")  # the logs' clock
    names = sorted(records[index].path for index in earlier.inputs)
    hours = RUN_GAP / 3600
    if lang == "zh":
        shown = "、".join(names[:3]) + (f" 等 {len(names)} 个文件" if len(names) > 3 else "")
        return (
            f"输入包含不止一次运行：{shown} 中只有比最近一次运行的第一个错误（{start}）"
            f"早 {hours:.0f} 小时以上的错误；只在这些文件中出现的问题排在最近一次运行的结果之后"
        )
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    verb = "holds" if len(names) == 1 else "hold"
    return (
        f"the inputs span more than one run: {shown} {verb} only errors from over "
        f"{hours:.0f} hours before the latest run's first error ({start}); "
        "what only they show is ranked after the latest run's findings"
    )


def _timeout_warnings(timeouts: dict[str, int]) -> list[str]:
    return [
        f"rule {rule_id}: pattern hit its time limit ({PATTERN_TIMEOUT:g} s) on {count} line(s); "
        + (
            "it was skipped there and not tried on later lines"
            if count >= MAX_TIMEOUTS
            else "those lines were skipped for it"
        )
        for rule_id, count in sorted(timeouts.items())
    ]


def _one_per_message(matches: list[Match]) -> list[Match]:
    """A message hard-wrapped over two lines matches from both, joined with the other: it is one
    message (seen once, on the line it starts on), not two."""
    wrapped = {(m.input_index, m.rule_id, m.evidence.line + 1) for m in matches if m.wrap > 0}
    return [m for m in matches if m.wrap >= 0 or (m.input_index, m.rule_id, m.evidence.line) not in wrapped]


def _then(items: Sequence[InputItem], later: Callable[[], Sequence[str]] | None) -> Iterator[InputItem]:
    yield from items
    if later is not None:
        yield from expand(later())


def _with_codes(matches: list[Match], rules: tuple[Rule, ...]) -> tuple[list[Match], tuple[Rule, ...]]:
    """Catalogue matches as one finding per code (rulebase/catalogue.py), which is imported, and
    its data read, only when a line carried a code."""
    if not any(match.rule_id.startswith("catalogue.") for match in matches):
        return matches, rules
    from ascend_doctor.rulebase.catalogue import specialise

    return specialise(matches, rules)


def diagnose(
    paths: Sequence[str],
    rulebase: RuleBase,
    options: ScanOptions | None = None,
    *,
    stdin: BinaryIO | None = None,
    progress: Progress | None = None,
    items: Sequence[InputItem] | None = None,
    later: Callable[[], Sequence[str]] | None = None,
) -> Report:
    """Scan every input with every rule and rank what was found. `items`: `paths` already
    expanded by the caller (the walk of a big tree is not done twice). `later`: more paths, asked
    for once the inputs are read (the plogs a job wrote while its output on `stdin` was scanned);
    it makes the scan one process's."""
    options = options or ScanOptions()
    items = expand(paths) if items is None else items
    if progress is not None:
        progress.sized(None if any(item.is_stdin for item in items) else sum(map(_size, items)))
    records: list[InputRecord] = []
    matches: list[Match] = []
    timeouts: dict[str, int] = {}
    warnings: list[str] = []
    jobs = None if later is not None else _parallel_jobs(items, options)
    scanned = None
    if jobs:
        from ascend_doctor.read.workers import NoWorkers

        try:
            scanned = _scan_parallel(items, jobs, rulebase, options, progress)
        except NoWorkers as exc:  # a box short of memory after a crash: one process can read it
            warnings.append(f"{exc}; scanned in one process")
    if scanned is not None:
        records, matches, timeouts = scanned
    else:
        matcher = Matcher(rulebase.rules, options.engine, use_cache=getattr(rulebase, "use_cache", True))
        with alarm_clock():
            for index, item in enumerate(_then(items, later)):
                label = options.stdin_name if item.is_stdin else item.label
                record, found = _scan_item(matcher, item, index, label, stdin, progress)
                records.append(record)
                matches.extend(found)
        timeouts = matcher.timeouts
    rules = (*rulebase.rules, *uncaught.RULES, *stated_versions.RULES)
    matches, rules = _with_codes(_one_per_message(matches), rules)
    matches, rules = outcome.at_exit(records, *uncaught.with_death(records, matches, rules))
    peer = waited_for(matches, rules)
    earlier = earlier_runs(matches, rules)
    if earlier is not None:
        warnings.append(earlier_runs_warning(earlier, records, options.lang))
    fired = {match.rule_id for match in matches}
    return Report(
        findings=as_gpu_job(rank(matches, rules, peer, earlier), gpu_only(records, matches)),
        inputs=tuple(records),
        warnings=tuple(warnings + _timeout_warnings(timeouts)),
        tool_version=__version__,
        rule_count=len(rulebase.rules),
        lang=options.lang,
        waited_for=peer,
        matches=tuple(matches),
        rules=tuple(rule for rule in rules if rule.id in fired),
    )


__all__ = ["ScanOptions", "diagnose", "earlier_runs_warning"]
