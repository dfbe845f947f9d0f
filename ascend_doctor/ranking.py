"""Matches -> ranked findings: one finding per rule, the real cause first.

The ranking key, best first:
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
from collections.abc import Iterable, Sequence

from ascend_doctor.model import Evidence, Finding, Kind, Match, Rule

VICTIM_CATEGORIES = frozenset({"hccl_timeout"})
MAX_EVIDENCE = 10
SYMPTOM_DISCOUNT = 0.5
_NUMBERS = re.compile(r"\d+")


def _evidence_key(match: Match) -> tuple[bool, float, int, int]:
    stamp = match.evidence.timestamp
    return (stamp is None, stamp or 0.0, match.input_index, match.evidence.line)


def _rank_key(rule: Rule, first: Match) -> tuple[object, ...]:
    stamp = first.evidence.timestamp
    return (
        -rule.severity.weight,
        rule.category in VICTIM_CATEGORIES,
        rule.kind is not Kind.CAUSE,
        -rule.confidence.score,
        stamp is None,
        stamp or 0.0,
        first.input_index,
        first.evidence.line,
        rule.id,
    )


def fingerprint(rule: Rule, evidence: Evidence) -> str:
    """Stable across runs and line shifts: rule id plus the first evidence with numbers folded."""
    text = _NUMBERS.sub("0", evidence.text)
    return hashlib.sha256(f"{rule.id}\n{text}".encode()).hexdigest()[:16]


def _role(rule: Rule, top: Rule | None) -> tuple[str, str | None]:
    if top is None or rule is top or top.category in VICTIM_CATEGORIES:
        return "cause", None
    if top.kind is not Kind.CAUSE:
        return "cause", None
    if rule.category in VICTIM_CATEGORIES:
        return "consequence", top.id
    if rule.kind is Kind.SYMPTOM:
        return "symptom", top.id
    return "cause", None


def rank(matches: Iterable[Match], rules: Sequence[Rule]) -> tuple[Finding, ...]:
    """Group matches by rule and order the groups by the documented key."""
    by_id = {rule.id: rule for rule in rules}
    groups: dict[str, list[Match]] = {}
    for match in matches:
        groups.setdefault(match.rule_id, []).append(match)
    ordered: list[tuple[tuple[object, ...], Rule, list[Match]]] = []
    for rule_id, group in groups.items():
        group.sort(key=_evidence_key)
        rule = by_id[rule_id]
        ordered.append((_rank_key(rule, group[0]), rule, group))
    ordered.sort(key=lambda item: item[0])
    top = ordered[0][1] if ordered else None
    findings = []
    for _, rule, group in ordered:
        role, related = _role(rule, top)
        confidence = rule.confidence.score * (SYMPTOM_DISCOUNT if role != "cause" else 1.0)
        findings.append(
            Finding(
                rule=rule,
                evidence=tuple(match.evidence for match in group[:MAX_EVIDENCE]),
                count=len(group),
                paths=tuple(dict.fromkeys(match.evidence.path for match in group)),
                ranks=tuple(sorted({m.evidence.rank for m in group if m.evidence.rank is not None})),
                confidence=round(confidence, 2),
                role=role,
                related_to=related,
                fingerprint=fingerprint(rule, group[0].evidence),
            )
        )
    return tuple(findings)
