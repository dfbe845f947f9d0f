"""Run every rule's own examples through the real matching path (prefilter included)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from io import BytesIO

from ascend_doctor.match.literals import common_literal, required_literals
from ascend_doctor.match.matcher import PATTERN_TIMEOUT, Matcher
from ascend_doctor.match.scanner import StreamScanner
from ascend_doctor.model import Rule

SLOW_EXAMPLE_SECONDS = 0.01
_clock = time.perf_counter


@dataclass(frozen=True)
class Problem:
    """One failed example (`missed` / `unexpected`) or a warning (`no-literal` / `slow`)."""

    rule_id: str
    kind: str
    detail: str


@dataclass(frozen=True)
class SelfCheck:
    rules: int
    examples: int
    failures: tuple[Problem, ...]
    warnings: tuple[Problem, ...]

    @property
    def ok(self) -> bool:
        return not self.failures


def _fired(matcher: Matcher, rule_id: str, line: str) -> tuple[bool, float]:
    """Whether the rule fires on the example line, and the seconds it took."""
    started = _clock()
    scanner = StreamScanner(matcher, "<example>", 0)
    result = scanner.scan(BytesIO(line.encode("utf-8")))
    return any(match.rule_id == rule_id for match in result.matches), _clock() - started


def _literal_warnings(rule: Rule) -> list[Problem]:
    problems = []
    for index, pattern in enumerate(rule.patterns):
        if not required_literals(pattern):
            detail = f"patterns[{index}] has no required literal: it runs on every line"
            problems.append(Problem(rule.id, "no-literal", detail))
        elif (common := common_literal(pattern)) is not None:
            detail = (
                f"patterns[{index}] is looked for by {common!r}, common in logs: every line holding it "
                "is checked, which slows big logs; give the pattern a longer or rarer fixed text"
            )
            problems.append(Problem(rule.id, "common-literal", detail))
    return problems


def _slow(example: str, elapsed: float, timed_out: bool, line: str) -> str:
    if timed_out:
        return (
            f"{example} hit the {PATTERN_TIMEOUT:g} s time limit: the pattern backtracks too much "
            "(nested or overlapping repeats such as (a|aa)+); log lines like it are skipped for this rule: "
            f"{line[:80]}"
        )
    return (
        f"{example} took {elapsed * 1000:.0f} ms (over {SLOW_EXAMPLE_SECONDS * 1000:.0f} ms; a pattern is "
        f"stopped after {PATTERN_TIMEOUT:g} s on a log line): {line[:80]}"
    )


def check_rules(rules: Sequence[Rule], engine: str = "auto") -> SelfCheck:
    """Every `match` example must fire its rule and no `no_match` example may."""
    matcher = Matcher(rules, engine)
    failures: list[Problem] = []
    warnings: list[Problem] = []
    examples = 0
    for rule in rules:
        warnings.extend(_literal_warnings(rule))
        cases = [(line, True) for line in rule.examples.match]
        cases += [(line, False) for line in rule.examples.no_match]
        for index, (line, expected) in enumerate(cases):
            examples += 1
            timeouts = matcher.timeouts.get(rule.id, 0)
            fired, elapsed = _fired(matcher, rule.id, line)
            label = "match" if expected else "no_match"
            example = f"{label}[{index if expected else index - len(rule.examples.match)}]"
            if fired != expected:
                kind = "missed" if expected else "unexpected"
                failures.append(Problem(rule.id, kind, f"{example}: {line}"))
            timed_out = matcher.timeouts.get(rule.id, 0) > timeouts
            if elapsed > SLOW_EXAMPLE_SECONDS and not timed_out:
                # A pause of the whole process (a garbage collection, a busy machine) is not a
                # slow pattern, which is slow every time: only a second slow run is reported.
                elapsed = min(elapsed, _fired(matcher, rule.id, line)[1])
            if timed_out or elapsed > SLOW_EXAMPLE_SECONDS:
                warnings.append(Problem(rule.id, "slow", _slow(example, elapsed, timed_out, line)))
    return SelfCheck(len(rules), examples, tuple(failures), tuple(warnings))
