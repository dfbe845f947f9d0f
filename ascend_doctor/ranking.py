"""Matches -> ranked findings: one finding per cause, the real cause first.

Matches are grouped by rule, then groups of the same category are folded into the best-ranked
one: two OOM rules firing on one OOM are one cause; HCCL timeouts on seven ranks are
one consequence. In the catch-all categories only symptoms fold; causes there stay apart.
The ranking key, best first:
  1. severity (error, warning, info), then the latest run first: a file whose errors all came
     long before the others' (an old plog left in ~/ascend/log) is of an earlier run
  2. victims last: a collective timeout (HCCL; NCCL in a GPU job) is what ranks print while
     waiting for the rank that failed; so is a catch-all error that only the ranks that timed
     out print (torch_npu's "call acl api failed" after the timeout), an echo of it, last
  3. kind (cause before symptom)
  4. said by the rank the timeouts name as the one they waited for (`remote rank [3]`): stronger
     evidence than time, which a restarted job's earlier attempt wins
  5. confidence (high, medium, low)
  6. when its rank started failing: the earliest time of an error line of that rank in that file
     (or of the file, where lines name no rank), where the log has times: the first failing rank
     first, in a log per rank and in one log of all ranks alike; then line order decides
  7. position (input order, then line)
  8. rule id
A run that says it finished or was working (a `no_failure` finding) then leads where nothing it
did not survive failed, with the quiet warnings folded into it (_completed).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import NamedTuple, Optional

from ascend_doctor.model import PROSE, Confidence, EnvRemedy, Evidence, Finding, Kind, Match, Rule, Severity
from ascend_doctor.read.events import remote_rank, timestamp_of
from ascend_doctor.regexes import regex

VICTIM_CATEGORIES = frozenset({"hccl_timeout"})
# Collective timeouts outside Ascend: a GPU job's ranks waiting for the one that failed (a CUDA
# OOM). Their category is not_ascend, as for the rest of a GPU log, so the rules are named here.
VICTIM_RULES = frozenset({"python.nccl-watchdog-timeout"})
# Catch-all categories name no single cause: two different causes in them stay apart.
CATCH_ALL_CATEGORIES = frozenset({"needs_more_evidence", "not_ascend"})
# A run that did not fail, and the findings that fold into it there: remarks, not causes.
FINISHED = "no_failure"
SERVING = "outcome.server-serving"  # a server that started: what it logged before, it survived
RAISED = regex(r"\s*(?:\w+\.)*\w*(?:Error|Exception)\b:")  # an exception's last line
AT_EXIT = "unclean_shutdown_noise"
BUG = "not_ascend"
QUIET_CATEGORIES = frozenset({"benign_fallback_warning", "needs_more_evidence", "not_ascend"})
REMARKS = QUIET_CATEGORIES | {AT_EXIT}
# A catalogue finding is one code (rulebase/catalogue.py): in a catch-all category two codes are
# two findings, as two causes there are.
CATALOGUE_PREFIX = "catalogue."
MAX_EVIDENCE = 10
# What a group is to the ranks that waited: none of theirs, their timeout, or an error that only
# repeats it (after the timeout it repeats).
NOT_A_VICTIM, TIMEOUT, ECHO = 0, 1, 2
# A catch-all error this close to a timeout line (seconds), or this few lines before its rank's
# first one, is part of the report of that timeout (_echoes).
ECHO_SECONDS = 2.0
ECHO_LINES = 40
SYMPTOM_DISCOUNT = 0.5
# An error code of its own on a line: a CANN code, torch_npu's ERRxxxxx, a runtime code.
ERROR_CODE = regex(r"\bE[A-Z0-9]\d{4}\b|\berror code is \d+|\bERR\d{5}\b")
# A line that opens as a log record does (`EI0002: ...`, `[ERROR] ...`, torch_npu's `[Error]: ...`,
# `[E ProcessGroupHCCL...`).
LOG_RECORD = regex(r"\s*(?:E[A-Z0-9]\d{4}:|\[(?:E|ERROR|Error)[\] ])")


_Position = tuple[bool, float, int, int]
FILE = -1  # the clock's key for a whole file, beside its ranks
# Errors further apart than this are of different runs. It is longer than any HCCL timeout a job
# sets (the ranks that time out waiting for the first failing one stay in its run), and than any
# time-zone offset between logs of one run (a container's UTC log beside local-time plogs).
RUN_GAP = 24 * 3600.0


def waits(rule: Rule) -> bool:
    """Whether a rule is what a rank prints while it waits for another one: a collective timeout."""
    return rule.category in VICTIM_CATEGORIES or rule.id in VICTIM_RULES


class EarlierRuns(NamedTuple):
    """The inputs whose errors all came before the latest run, and when that run's first error came."""

    inputs: frozenset[int]
    latest_start: float


def earlier_runs(matches: Sequence[Match], rules: Sequence[Rule]) -> EarlierRuns | None:
    """Inputs that hold only errors of an earlier run: the latest run reaches back from the last
    error for as long as errors keep coming at most RUN_GAP apart. None when there are none."""
    errors = {rule.id for rule in rules if rule.severity is Severity.ERROR}
    last: dict[int, float] = {}
    times = []
    for match in matches:
        stamp = match.evidence.timestamp
        if stamp is None or match.rule_id not in errors:
            continue
        times.append(stamp)
        last[match.input_index] = max(stamp, last.get(match.input_index, stamp))
    times.sort()
    start = times[-1] if times else 0.0
    for stamp in reversed(times):
        if start - stamp > RUN_GAP:
            break
        start = stamp
    earlier = frozenset(index for index, stamp in last.items() if stamp < start)
    return EarlierRuns(earlier, start) if earlier else None


class _Clock:
    """Orders evidence: each rank of each file, and the lines of the file that name no rank, by
    when their first error line happened (with no time of their own, by when the file's did), then
    lines by number."""

    def __init__(self, matches: Sequence[Match], rules: dict[str, Rule]) -> None:
        self.started: dict[tuple[int, int | None], float] = {}
        for match in matches:
            if match.evidence.timestamp is None or rules[match.rule_id].severity is not Severity.ERROR:
                continue
            # To the second: a line stamped 20:15:31 is not earlier than one stamped 20:15:31.092.
            stamp = float(int(match.evidence.timestamp))
            for where in ((match.input_index, match.evidence.rank), (match.input_index, FILE)):
                known = self.started.get(where)
                if known is None or stamp < known:
                    self.started[where] = stamp

    def position(self, match: Match) -> _Position:
        index = match.input_index
        stamp = self.started.get((index, match.evidence.rank))
        if stamp is None:
            stamp = self.started.get((index, FILE))
        return (stamp is None, stamp or 0.0, index, match.evidence.line)


class _Group:
    """The matches that fold into one finding, and the other rules folded in with them."""

    def __init__(
        self, rule: Rule, matches: list[Match], first: _Position, roles: tuple[bool, int, bool]
    ) -> None:
        self.rule = rule
        self.matches = matches
        self.first = first
        self.earlier_run, self.victim, self.awaited = roles
        self.also: list[str] = []
        self.waited: set[int | str] = set()  # see Finding.waited

    def absorb(self, group: _Group) -> None:
        """Fold another group into this one: its rule (and what it had folded) is also matched,
        its lines not already here join the evidence."""
        self.also.extend([group.rule.id, *group.also])
        self.waited.update(group.waited)
        lines = {(m.input_index, m.evidence.line) for m in self.matches}
        self.matches.extend(m for m in group.matches if (m.input_index, m.evidence.line) not in lines)

    @property
    def key(self) -> tuple[object, ...]:
        return (
            -self.rule.severity.weight,
            self.earlier_run,
            self.victim,
            self.rule.kind is not Kind.CAUSE,
            not self.awaited,
            -self.rule.confidence.score,
            *self.first,
            self.rule.id,
        )


_Moment = tuple[Optional[float], int]  # (time, line) of a line in a file
_Where = tuple[int, Optional[int]]  # (input, rank)


class _Timeouts(NamedTuple):
    """Where each rank that timed out first said so: (file, rank) -> (time, line); and the times
    of every timeout line of each file that carries its own, whatever rank said it."""

    first: dict[_Where, _Moment]
    stamps: dict[int, list[float]]


def _timeouts(matches: Sequence[Match], rules: dict[str, Rule]) -> _Timeouts:
    """Only error lines count (not a startup warning about the timeout settings, nor a timeout
    quoted in the user's prose). In `first`, the lines of a file that name no rank count as one
    more rank (see `_after_its_timeout`), if they are log records: with a time of their own, or
    opening with an error code or level (a user's sentence that names the code is neither). The
    awaited rank's own timeout counts too: what it says after it is as much an echo as the
    others' (a rank that was only slow, then waited for ranks that had given up)."""
    first: dict[_Where, _Moment] = {}
    stamps: dict[int, list[float]] = {}
    for match in matches:
        rule, rank = rules[match.rule_id], match.evidence.rank
        if not waits(rule) or rule.severity is not Severity.ERROR or match.quoted:
            continue
        if _own_time(match):
            stamps.setdefault(match.input_index, []).append(match.evidence.timestamp or 0.0)
        if not _log_record(match):
            continue
        stamp = match.evidence.timestamp if rank is not None or _own_time(match) else None
        where, moment = (match.input_index, rank), (stamp, match.evidence.line)
        if where not in first or _before(moment, first[where]):
            first[where] = moment
    return _Timeouts(first, stamps)


def _before(one: _Moment, other: _Moment) -> bool:
    """Whether a line came before another of the same file and rank: by time where both have one."""
    if one[0] is not None and other[0] is not None and one[0] != other[0]:
        return one[0] < other[0]
    return one[1] < other[1]


def _echoes_timeouts(rule: Rule, matches: Sequence[Match], timeouts: _Timeouts) -> bool:
    """Whether a generic NPU error only repeats a timeout (torch_npu's "call acl api failed" or
    "The Inner error is reported as above", a stream that failed to synchronize); a bug in the
    script (`not_ascend`) never does, whatever rank prints it where. It adds nothing
    to the timeout, and must not hide it. Where its lines carry their own time, each is stamped
    within ECHO_SECONDS of a timeout line of its file: the rank that failed first says so a whole
    timeout (30 minutes by default) before the others give up. Else each is said by a rank that
    timed out, after it did or in the block that reports it (torch_npu prints the exception before
    the CANN error it wraps). A line with no time of its own has the time of the lines before it,
    which says nothing of when it was said."""
    if rule.category == BUG or rule.category not in CATCH_ALL_CATEGORIES:
        return False
    opened: dict[int, int] = {}  # per input, the first line of the group that names no rank
    for match in matches:
        if match.evidence.rank is None:
            opened[match.input_index] = min(
                opened.get(match.input_index, match.evidence.line), match.evidence.line
            )
    timed = [match for match in matches if _own_time(match)]
    if timed:
        return all(
            _near_a_timeout(match, timeouts) or _after_its_timeout(match, timeouts, opened) for match in timed
        )
    return all(_after_its_timeout(match, timeouts, opened) for match in matches)


def _log_record(match: Match) -> bool:
    """Whether a line is one a process wrote, not a user's sentence that names it: it names its
    rank, carries a time of its own, or opens as log records do."""
    return match.evidence.rank is not None or _own_time(match) or bool(LOG_RECORD.match(match.evidence.text))


def _own_time(match: Match) -> bool:
    return match.evidence.timestamp is not None and timestamp_of(match.evidence.text) is not None


def _near_a_timeout(match: Match, timeouts: _Timeouts) -> bool:
    stamp = match.evidence.timestamp or 0.0
    return any(abs(stamp - other) <= ECHO_SECONDS for other in timeouts.stamps.get(match.input_index, ()))


def _after_its_timeout(match: Match, timeouts: _Timeouts, opened: dict[int, int]) -> bool:
    """Whether a line is its rank's timeout said again: after it, or in the block before it. Lines
    that name no rank may be any process's. There a generic NPU error is the timeout's only when
    the error first speaks in the block before the file's first timeout, the wrapper of the CANN
    block that follows (a pasted MindSpore or Ray worker log), and each line of it is within
    ECHO_LINES of that timeout. Where both lines carry a time of their own, only
    `_near_a_timeout` judges. `opened`: per input, the line where the error first speaks without
    a rank."""
    timeout = timeouts.first.get((match.input_index, match.evidence.rank))
    if timeout is None:
        return False
    if match.evidence.rank is None:
        first = opened[match.input_index]
        return (
            not (_own_time(match) and timeout[0] is not None)
            and 0 <= timeout[1] - first <= ECHO_LINES
            and abs(timeout[1] - match.evidence.line) <= ECHO_LINES
        )
    moment = (match.evidence.timestamp if _own_time(match) else None, match.evidence.line)
    return not _before(moment, timeout) or (
        (moment[0] is None or timeout[0] is None) and timeout[1] - match.evidence.line <= ECHO_LINES
    )


def _reports_the_timeout(rule: Rule, matches: Sequence[Match], lines: frozenset[tuple[int, int]]) -> bool:
    """Whether a catch-all symptom first speaks on a line that is itself a timeout (torch_npu's
    "NPU function error: aclrtSynchronizeDevice, error code is 507046"): it is that timeout, said
    generically, in a log with or without ranks."""
    if rule.category not in CATCH_ALL_CATEGORIES or rule.kind is not Kind.SYMPTOM:
        return False
    first = min(matches, key=lambda match: (match.input_index, match.evidence.line))
    return (first.input_index, first.evidence.line) in lines


def _after_the_timeouts(rule: Rule, matches: Sequence[Match], first: dict[int, int]) -> bool:
    """Whether a generic report that carries no error code of its own (vLLM's EngineDeadError)
    only comes after its input's first timeout line (`first`, of the timeouts that are log records):
    the aftermath of that timeout, not another cause. A CANN code line (`EZ9999: Inner Error!`)
    there may be another process's own failure, so it keeps its place."""
    if rule.category == BUG or rule.category not in CATCH_ALL_CATEGORIES or rule.kind is not Kind.SYMPTOM:
        return False
    return all(
        match.input_index in first
        and match.evidence.line > first[match.input_index]
        and not ERROR_CODE.search(match.evidence.text)
        for match in matches
    )


def _sightings(matches: list[Match], rules: dict[str, Rule]) -> tuple[list[Match], dict[str, Rule]]:
    """What the job printed. The source line a traceback quotes, or prose that names a code (a
    hint, a comment, a command that looks for it), is no sighting of a rule that the job's own
    output shows. A rule that only prose shows is at most a note; one that only quoted source
    shows keeps its severity (the line that raised is the signature: mmcv's `next(...)`)."""
    quoted = {m.rule_id for m in matches if m.quoted}
    if not quoted:
        return matches, rules
    printed = {m.rule_id for m in matches if not m.quoted}
    kept = [m for m in matches if not m.quoted or m.rule_id not in printed]
    notes = {m.rule_id for m in kept if m.quoted == PROSE}
    demoted = {
        rule_id: rules[rule_id]._replace(severity=Severity.INFO, confidence=Confidence.LOW)
        for rule_id in notes
        if rules[rule_id].severity is not Severity.INFO
    }
    return kept, {**rules, **demoted} if demoted else rules


def _fold_by_category(groups: list[_Group], clock: _Clock, rules: dict[str, Rule]) -> list[_Group]:
    """Groups arrive best first; later groups of a category fold into the first one, whatever
    their severity (a warning and an error about one backend are one cause). The evidence of the
    more severe rules comes first: it is where the finding is said to be."""
    kept: dict[tuple[str, ...], _Group] = {}
    lines: dict[tuple[str, ...], set[tuple[int, int]]] = {}  # the (input, line) each grown cause holds
    for group in groups:
        rule = group.rule
        cause: tuple[str, ...] = (rule.category,)
        if rule.category in CATCH_ALL_CATEGORIES and (
            rule.kind is Kind.CAUSE or rule.id.startswith(CATALOGUE_PREFIX)
        ):
            cause += (rule.id,)
        best = kept.get(cause)
        if best is None:
            kept[cause] = group
            continue
        best.also.append(group.rule.id)
        held = lines.get(cause)
        if held is None:
            held = lines[cause] = {(m.input_index, m.evidence.line) for m in best.matches}
        added = [m for m in group.matches if not m.quoted and (m.input_index, m.evidence.line) not in held]
        best.matches.extend(added)
        held.update((m.input_index, m.evidence.line) for m in added)
    # Sorted once each, not after every fold: a log of many findings folded 700 groups into a
    # few, each fold sorting the thousands of matches kept so far (2.6 s of a 6 MB log's 5).
    for cause in lines:
        kept[cause].matches.sort(key=lambda m: (-rules[m.rule_id].severity.weight, clock.position(m)))
    return list(kept.values())


def finished_lines(matches: Iterable[Match], rules: dict[str, Rule]) -> dict[int, int]:
    """Each input's last line that says its run finished or was working (a `no_failure` rule):
    what the input printed before that line, the run survived."""
    finished: dict[int, int] = {}
    for match in matches:
        if rules[match.rule_id].category == FINISHED:
            finished[match.input_index] = max(finished.get(match.input_index, -1), match.evidence.line)
    return finished


def _completed(groups: list[_Group], clock: _Clock, rules: dict[str, Rule]) -> list[_Group]:
    """A run that says it finished (a `no_failure` rule: final metrics, a server answering).
    What it printed before its last such line it survived. Beside an error it did not survive
    that line is no verdict and is dropped; beside a warning after it that names a cause (exit
    noise too), it stays, and the errors it survived go last. Otherwise it leads: quiet remarks
    (fallbacks, notes) and the warnings it survived fold into it, and the errors too where the work
    ended or a server kept serving (else they follow it). It takes their worst severity, an error
    as a warning: what the run survived did not fail it, but `--fail-on warning` still sees it."""
    done = [group for group in groups if group.rule.category == FINISHED]
    if not done:
        return groups
    finished = finished_lines((match for group in done for match in group.matches), rules)

    def survived(group: _Group) -> bool:  # exit noise came after the end, whatever followed it
        return group.rule.category != AT_EXIT and all(
            m.evidence.line < finished.get(m.input_index, -1) for m in group.matches
        )

    def remark(group: _Group) -> bool:  # a fallback, a note, a line that only says it exited
        return group.rule.category in QUIET_CATEGORIES or (
            group.rule.category == AT_EXIT and group.rule.severity is Severity.INFO
        )

    rest = [group for group in groups if group.rule.category != FINISHED]
    if any(group.rule.severity is Severity.ERROR and not survived(group) for group in rest):
        return rest
    if any(not remark(group) and not survived(group) for group in rest):
        lived = [group for group in rest if group.rule.severity is Severity.ERROR and survived(group)]
        return [*(group for group in groups if group not in lived), *lived]
    # Errors fold too where the line says the work ended or a server kept serving. After a one-shot
    # step that went well (run_check, an ATC conversion), an exception raised before it was
    # another run's death, pasted beside the run that worked: it follows.
    ended_or_serving = any(group.rule.kind is Kind.CAUSE or group.rule.id == SERVING for group in done)

    def lived_through(group: _Group) -> bool:
        return survived(group) and (
            group.rule.severity is not Severity.ERROR
            or ended_or_serving
            or not any(RAISED.match(match.evidence.text) for match in group.matches)
        )

    lead = done[0]
    quiet = [group for group in rest if remark(group) or lived_through(group)]
    for group in [*done[1:], *quiet]:
        lead.absorb(group)
    lead.matches.sort(
        key=lambda m: (m.rule_id != lead.rule.id, rules[m.rule_id].category != FINISHED, clock.position(m))
    )
    worst = max((group.rule.severity for group in quiet), key=lambda severity: severity.weight, default=None)
    if worst is Severity.ERROR:  # an error the run survived did not fail it
        worst = Severity.WARNING
    if worst is not None and worst.weight > lead.rule.severity.weight:
        lead.rule = lead.rule._replace(severity=worst)  # `--fail-on warning` still sees the warnings
    return [lead, *(group for group in rest if group not in quiet)]


def _beside_a_bug(
    groups: list[_Group], waited_on_top: bool, clock: _Clock, rules: dict[str, Rule]
) -> list[_Group]:
    """Where the job died of something outside the NPU stack (a `not_ascend` cause leads), what
    the stack printed because of it (the other ranks' timeouts, the ACL call that failed on the way
    out) and the run's remarks (fallbacks, notes, exit noise) fold into it: beside a bug in the
    script they would read as NPU causes of their own. The ranks that timed out are kept, for the
    verdict's "N other ranks timed out waiting for it"."""
    top = groups[0]
    if top.rule.category != BUG or top.rule.kind is not Kind.CAUSE:
        return groups
    kept = [top]
    for group in groups[1:]:
        role, _related = _role(group.rule, top.rule, waited_on_top)
        if role == "cause" and group.rule.category not in REMARKS:
            kept.append(group)
            continue
        if role == "consequence":
            ranks = {m.evidence.rank for m in group.matches if m.evidence.rank is not None}
            top.waited.update(ranks or {m.evidence.path for m in group.matches})
        top.absorb(group)
    top.matches.sort(key=lambda m: (rules[m.rule_id].category != BUG, clock.position(m)))
    return kept


def _role(rule: Rule, top: Rule, waited_on_top: bool) -> tuple[str, str | None]:
    """A finding's role beside the top one. Timeouts are the consequence of a top cause, and of a
    top symptom (a bare EZ9999) when they name its rank as the one they waited for. Beside a run
    that finished, what it survived is no symptom of finishing."""
    if rule is top or waits(top) or top.category == FINISHED:
        return "cause", None
    if waits(rule) and (top.kind is Kind.CAUSE or waited_on_top):
        return "consequence", top.id
    if top.kind is not Kind.CAUSE:
        return "cause", None
    if rule.kind is Kind.SYMPTOM:
        return "symptom", top.id
    return "cause", None


def resolve_env(rule: Rule, evidence: Evidence) -> tuple[EnvRemedy, ...]:
    """The rule's remedies, each value taken from the log where the pattern captured a group
    named like the variable (`(?P<LD_PRELOAD>/usr/lib/.../libgomp.so.1)`)."""
    captured = dict(evidence.captures)
    return tuple(
        remedy._replace(value=captured[remedy.name]) if captured.get(remedy.name) else remedy
        for remedy in rule.env
    )


def _seconds_before(matches: Sequence[Match], earlier: EarlierRuns | None) -> float | None:
    """For what only an earlier run showed: how long before the latest run's first error its last
    error came."""
    if earlier is None or not all(match.input_index in earlier.inputs for match in matches):
        return None
    stamps = [match.evidence.timestamp for match in matches if match.evidence.timestamp is not None]
    return earlier.latest_start - max(stamps) if stamps else None


def _finding(group: _Group, top: _Group, waited_on_top: bool, earlier: EarlierRuns | None) -> Finding:
    # What only an earlier run shows is no symptom or consequence of the latest run's failure.
    stale = group.earlier_run and not top.earlier_run
    role, related = ("cause", None) if stale else _role(group.rule, top.rule, waited_on_top)
    matches = group.matches
    confidence = group.rule.confidence.score * (SYMPTOM_DISCOUNT if role != "cause" else 1.0)
    return Finding(
        rule=group.rule,
        evidence=tuple(match.evidence for match in matches[:MAX_EVIDENCE]),
        count=sum(1 + match.repeats for match in matches),
        paths=tuple(dict.fromkeys(match.evidence.path for match in matches)),
        ranks=tuple(sorted({m.evidence.rank for m in matches if m.evidence.rank is not None})),
        confidence=round(confidence, 2),
        role=role,
        related_to=related,
        also=tuple(group.also),
        env=resolve_env(group.rule, next(m.evidence for m in matches if m.rule_id == group.rule.id)),
        earlier_run=_seconds_before(matches, earlier) if stale else None,
        waited=tuple(sorted(group.waited, key=str)),
    )


def waited_for(matches: Iterable[Match], rules: Sequence[Rule]) -> tuple[int, int] | None:
    """The peer rank that timeouts name most (`remote rank [5]`), with how many lines name it."""
    victims = {rule.id for rule in rules if waits(rule)}
    counts: Counter[int] = Counter()
    for match in matches:
        if match.rule_id in victims:
            peer = remote_rank(match.evidence.text)
            if peer is not None and peer != match.evidence.rank:
                counts[peer] += 1 + match.repeats
    return counts.most_common(1)[0] if counts else None


def rank(
    matches: Iterable[Match],
    rules: Sequence[Rule],
    peer: tuple[int, int] | None = None,
    earlier: EarlierRuns | None = None,
) -> tuple[Finding, ...]:
    """Group matches by rule, fold by category, and order by the documented key. `peer`: what
    `waited_for` found in the same matches (timeouts that name the top finding's rank are its
    consequences); `earlier`: what `earlier_runs` found in them."""
    every, by_id = _sightings(list(matches), {rule.id: rule for rule in rules})
    clock = _Clock(every, by_id)
    grouped: dict[str, list[Match]] = {}
    for match in every:
        grouped.setdefault(match.rule_id, []).append(match)
    timeouts = _timeouts(every, by_id)
    said = [m for m in every if waits(by_id[m.rule_id]) and by_id[m.rule_id].severity is Severity.ERROR]
    timeout_lines = frozenset((m.input_index, m.evidence.line) for m in said)
    first_recorded: dict[int, int] = {}  # per input, its first timeout line that is a log record
    for m in said:
        if _log_record(m):
            first_recorded[m.input_index] = min(
                first_recorded.get(m.input_index, m.evidence.line), m.evidence.line
            )
    groups = []
    for rule_id, found in grouped.items():
        found.sort(key=clock.position)
        rule = by_id[rule_id]
        if waits(rule):
            victim = TIMEOUT
        elif (
            _echoes_timeouts(rule, found, timeouts)
            or _reports_the_timeout(rule, found, timeout_lines)
            or _after_the_timeouts(rule, found, first_recorded)
        ):
            victim = ECHO
        else:
            victim = NOT_A_VICTIM
        awaited = peer is not None and any(match.evidence.rank == peer[0] for match in found)
        stale = earlier is not None and all(match.input_index in earlier.inputs for match in found)
        groups.append(_Group(rule, found, clock.position(found[0]), (stale, victim, awaited)))
    groups.sort(key=lambda group: group.key)
    groups = _completed(_fold_by_category(groups, clock, by_id), clock, by_id)
    if not groups:
        return ()
    top = groups[0]
    waited_on_top = peer is not None and any(match.evidence.rank == peer[0] for match in top.matches)
    groups = _beside_a_bug(groups, waited_on_top, clock, by_id)
    return tuple(_finding(group, top, waited_on_top, earlier) for group in groups)
