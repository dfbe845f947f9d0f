"""What a schema 2 JSON report adds so that reports of several machines can be merged: the
machine, every match the ranking saw, the rules that made them, and per input and per finding the
ranks, error times, awaited ranks and run. `merge.py` reads back exactly what this writes.

A match is written as `[rule_id, line, rank, time]`, followed by `text` and `captures` where they
can matter after a merge: for the first MAX_EVIDENCE lines of each rule, input and rank (a merged
finding shows at most that many lines, and inside one rank of one input it takes them in line
order), and for every timeout line that names the rank it waited for.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from typing import Any

from ascend_doctor.engine import earlier_runs_warning
from ascend_doctor.model import Finding, Match, Raised, Report, Rule, Severity, Text
from ascend_doctor.ranking import MAX_EVIDENCE, VICTIM_CATEGORIES, EarlierRuns, earlier_runs
from ascend_doctor.read.accelerator import ascend_sign
from ascend_doctor.read.events import remote_rank

SCHEMA_VERSION = 2
TIME_BASIS = (
    "times are the logs' own wall-clock times, read as UTC without conversion (logs carry no zone); "
    "utc_offset is the zone of the machine that diagnosed them"
)


def iso_time(stamp: float | None) -> str | None:
    """A log time as ISO 8601 without a zone (the time as the log wrote it)."""
    if stamp is None:
        return None
    return datetime.fromtimestamp(stamp, timezone.utc).replace(tzinfo=None).isoformat(timespec="milliseconds")


def _text(text: Text) -> dict[str, str]:
    return {"en": text.en, "zh": text.zh}


def rule_dict(rule: Rule) -> dict[str, Any]:
    """A matched rule as a merge needs it: what ranks it and what the report says of it."""
    return {
        "category": rule.category,
        "severity": rule.severity.value,
        "confidence": rule.confidence.value,
        "kind": rule.kind.value,
        "title": _text(rule.title),
        "cause": _text(rule.cause),
        "fix": _text(rule.fix),
        "env": [{"name": env.name, "value": env.value, "why": _text(env.why)} for env in rule.env],
    }


def _kept(matches: Sequence[Match], rules: dict[str, Rule]) -> set[int]:
    """Which matches keep their text (see the module's docstring), by position in `matches`."""
    seen: dict[tuple[str, int, int | None], int] = defaultdict(int)
    kept = set()
    for position, match in sorted(enumerate(matches), key=lambda item: item[1].evidence.line):
        where = (match.rule_id, match.input_index, match.evidence.rank)
        seen[where] += 1
        victim = rules[match.rule_id].category in VICTIM_CATEGORIES
        if seen[where] <= MAX_EVIDENCE or (victim and remote_rank(match.evidence.text) is not None):
            kept.add(position)
    return kept


def _hit(match: Match, keep: bool) -> list[Any]:
    """[rule, line, rank, time, text, captures, quoted, repeats]: text and captures only where a merge can
    show them, and the list cut after its last item that is set."""
    evidence = match.evidence
    hit: list[Any] = [match.rule_id, evidence.line, evidence.rank, evidence.timestamp]
    rest: list[Any] = [
        evidence.text if keep else None,
        dict(evidence.captures) if keep and evidence.captures else None,
        match.quoted or None,
        match.repeats or None,
    ]
    while rest and rest[-1] is None:
        rest.pop()
    return hit + rest


def _raised(raised: Raised) -> dict[str, Any]:
    evidence = raised.evidence
    return {
        "line": evidence.line,
        "text": evidence.text,
        "rank": evidence.rank,
        "time": evidence.timestamp,
        "captures": dict(evidence.captures),
        "name": raised.name,
        "message": raised.message,
        "start": raised.start,
        "end": raised.end,
        "frame": raised.frame,
        "chain": raised.chain,
    }


class NodeFacts:
    """The schema 2 additions of one report, computed once from its matches."""

    def __init__(self, report: Report) -> None:
        self.report = report
        self.rules = {rule.id: rule for rule in report.rules}
        self.by_input: dict[int, list[Match]] = defaultdict(list)
        self.by_rule: dict[str, list[Match]] = defaultdict(list)
        for match in report.matches:
            self.by_input[match.input_index].append(match)
            self.by_rule[match.rule_id].append(match)
        self.earlier: EarlierRuns | None = earlier_runs(report.matches, report.rules)

    def _errors(self, matches: Iterable[Match]) -> list[float]:
        return [
            m.evidence.timestamp
            for m in matches
            if m.evidence.timestamp is not None and self.rules[m.rule_id].severity is Severity.ERROR
        ]

    def input_extras(self, index: int) -> dict[str, Any]:
        """Per input: node, ranks, first and last error time, run, how many matches, the matches."""
        record = self.report.inputs[index]
        matches = self.by_input.get(index, [])
        kept = _kept(matches, self.rules)
        errors = self._errors(matches)
        return {
            "node": record.node or self.report.node or None,
            "ranks": sorted({m.evidence.rank for m in matches if m.evidence.rank is not None}),
            "first_error": iso_time(min(errors)) if errors else None,
            "last_error": iso_time(max(errors)) if errors else None,
            "run": "earlier" if self.earlier and index in self.earlier.inputs else "latest",
            "matched": len(matches),
            "hits": [_hit(match, position in kept) for position, match in enumerate(matches)],
            "raised": [_raised(raised) for raised in record.raised],
            "world_size": record.world_size,
            # What the verdict on a GPU job's logs needs: the input's own signs and its matched lines'.
            "ascend_seen": record.ascend_seen or any(ascend_sign(m.evidence.text.encode()) for m in matches),
            "foreign_seen": record.foreign_seen,
        }

    def finding_extras(self, finding: Finding) -> dict[str, Any]:
        """Per finding: its nodes, first and last error time, and the ranks its timeouts waited for."""
        matches = [m for rule_id in (finding.rule.id, *finding.also) for m in self.by_rule.get(rule_id, ())]
        errors = self._errors(matches)
        nodes = {self.report.inputs[m.input_index].node or self.report.node for m in matches}
        victims = (m for m in matches if self.rules[m.rule_id].category in VICTIM_CATEGORIES)
        awaited = {remote_rank(m.evidence.text) for m in victims}
        return {
            "nodes": sorted(node for node in nodes if node),
            "first_error": iso_time(min(errors)) if errors else None,
            "last_error": iso_time(max(errors)) if errors else None,
            "awaited_ranks": sorted(rank for rank in awaited if rank is not None),
        }

    def run_split(self) -> dict[str, Any]:
        """Which inputs hold only errors of an earlier run, and the warning that says so (a merge
        works it out again over all nodes, so it drops each node's own)."""
        if self.earlier is None:
            return {"latest_start": None, "earlier_inputs": [], "warning": None}
        inputs = self.report.inputs
        return {
            "latest_start": iso_time(self.earlier.latest_start),
            "earlier_inputs": sorted(inputs[index].path for index in self.earlier.inputs),
            "warning": earlier_runs_warning(self.earlier, inputs),
        }

    def head(self) -> dict[str, Any]:
        """The top-level additions: the machine, the time basis, the awaited rank, the run split."""
        peer = self.report.waited_for
        return {
            "node": self.report.node or None,
            "utc_offset": self.report.utc_offset or None,
            "time_basis": TIME_BASIS,
            "awaited": {"rank": peer[0], "lines": peer[1]} if peer else None,
            "runs": self.run_split(),
        }

    def rules_matched(self) -> dict[str, Any]:
        return {rule.id: rule_dict(rule) for rule in self.report.rules}
