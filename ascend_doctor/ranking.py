"""Matches -> ranked findings: one finding per cause, the real cause first.

Matches are grouped by rule, then groups of the same category are folded into the best-ranked
one (two OOM rules firing on one OOM are one cause; HCCL timeouts on seven ranks are one
consequence). The ranking key, best first:
  1. severity (error, warning, info)
  2. victims last: an HCCL timeout is what ranks print while waiting for the rank that failed
  3. kind (cause before symptom)
  4. confidence (high, medium, low)
  5. earliest event time, where the log has times (the first failing rank)
  6. position (input order, then line)
  7. rule id
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ascend_doctor.events import remote_rank
from ascend_doctor.model import Evidence, Finding, Kind, Match, Rule

VICTIM_CATEGORIES = frozenset({"hccl_timeout"})
MAX_EVIDENCE = 10
SYMPTOM_DISCOUNT = 0.5
_NUMBERS = re.compile(r"\d+")


@dataclass
class _Group:
    rule: Rule
    matches: list[Match]
    also: list[str] = field(default_factory=list)

    @property
    def key(self) -> tuple[object, ...]:
        first = self.matches[0]
        stamp = first.evidence.timestamp
        return (
            -self.rule.severity.weight,
            self.rule.category in VICTIM_CATEGORIES,
            self.rule.kind is not Kind.CAUSE,
            -self.rule.confidence.score,
            stamp is None,
            stamp or 0.0,
            first.input_index,
            first.evidence.line,
            self.rule.id,
        )


def _evidence_key(match: Match) -> tuple[bool, float, int, int]:
    stamp = match.evidence.timestamp
    return (stamp is None, stamp or 0.0, match.input_index, match.evidence.line)


def fingerprint(rule: Rule, evidence: Evidence) -> str:
    """Stable across runs and line shifts: rule id plus the first evidence with numbers folded."""
    text = _NUMBERS.sub("0", evidence.text)
    return hashlib.sha256(f"{rule.id}\n{text}".encode()).hexdigest()[:16]


def _fold_by_category(groups: list[_Group]) -> list[_Group]:
    """Groups arrive best first; later groups of a category fold into the first one."""
    kept: dict[str, _Group] = {}
    for group in groups:
        best = kept.get(group.rule.category)
        if best is None:
            kept[group.rule.category] = group
            continue
        best.also.append(group.rule.id)
        lines = {(m.input_index, m.evidence.line) for m in best.matches}
        best.matches.extend(m for m in group.matches if (m.input_index, m.evidence.line) not in lines)
        best.matches.sort(key=_evidence_key)
    return list(kept.values())


def _role(rule: Rule, top: Rule) -> tuple[str, str | None]:
    if rule is top or top.category in VICTIM_CATEGORIES or top.kind is not Kind.CAUSE:
        return "cause", None
    if rule.category in VICTIM_CATEGORIES:
        return "consequence", top.id
    if rule.kind is Kind.SYMPTOM:
        return "symptom", top.id
    return "cause", None


def _finding(group: _Group, top: Rule) -> Finding:
    role, related = _role(group.rule, top)
    matches = group.matches
    confidence = group.rule.confidence.score * (SYMPTOM_DISCOUNT if role != "cause" else 1.0)
    return Finding(
        rule=group.rule,
        evidence=tuple(match.evidence for match in matches[:MAX_EVIDENCE]),
        count=len(matches),
        paths=tuple(dict.fromkeys(match.evidence.path for match in matches)),
        ranks=tuple(sorted({m.evidence.rank for m in matches if m.evidence.rank is not None})),
        confidence=round(confidence, 2),
        role=role,
        related_to=related,
        fingerprint=fingerprint(group.rule, matches[0].evidence),
        also=tuple(group.also),
    )


def waited_for(matches: Iterable[Match], rules: Sequence[Rule]) -> tuple[int, int] | None:
    """The peer rank that timeouts name most (`remote rank [5]`), with how many lines name it."""
    victims = {rule.id for rule in rules if rule.category in VICTIM_CATEGORIES}
    counts: Counter[int] = Counter()
    for match in matches:
        if match.rule_id in victims:
            peer = remote_rank(match.evidence.text)
            if peer is not None and peer != match.evidence.rank:
                counts[peer] += 1
    return counts.most_common(1)[0] if counts else None


def rank(matches: Iterable[Match], rules: Sequence[Rule]) -> tuple[Finding, ...]:
    """Group matches by rule, fold by category, and order by the documented key."""
    by_id = {rule.id: rule for rule in rules}
    grouped: dict[str, list[Match]] = {}
    for match in matches:
        grouped.setdefault(match.rule_id, []).append(match)
    groups = [_Group(by_id[rule_id], sorted(found, key=_evidence_key)) for rule_id, found in grouped.items()]
    groups.sort(key=lambda group: group.key)
    groups = _fold_by_category(groups)
    if not groups:
        return ()
    top = groups[0].rule
    return tuple(_finding(group, top) for group in groups)
