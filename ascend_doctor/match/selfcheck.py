"""Run every rule's own examples through the real matching path (prefilter included)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from io import BytesIO

from ascend_doctor.match.literals import common_literal, required_literals
from ascend_doctor.match.matcher import PATTERN_TIMEOUT, Matcher
from ascend_doctor.match.scanner import StreamScanner
from ascend_doctor.model import Rule

SLOW_EXAMPLE_SECONDS = 0.01
# A plain word ('failed', 'graph') in the example lines of this many other rules is common in logs:
# the examples are real log lines of every area, so lines holding it are many and of many failures.
# A word only the rule's own lines hold ('shmget', 'whitelist') is specific to its failure.
COMMON_WORD_RULES = 2
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


def _seen_elsewhere(rule: Rule, examples: dict[str, str]) -> Callable[[str], bool]:
    """Whether a word is in the example lines of at least COMMON_WORD_RULES rules other than `rule`."""

    def seen(word: str) -> bool:
        word = word.lower()
        others = (text for rule_id, text in examples.items() if rule_id != rule.id and word in text)
        return sum(1 for _ in zip(range(COMMON_WORD_RULES), others)) >= COMMON_WORD_RULES

    return seen


def _literal_warnings(rule: Rule, examples: dict[str, str]) -> list[Problem]:
    problems = []
    for index, pattern in enumerate(rule.patterns):
        if not required_literals(pattern):
            detail = f"patterns[{index}] has no required literal: it runs on every line"
            problems.append(Problem(rule.id, "no-literal", detail))
        elif (common := common_literal(pattern, _seen_elsewhere(rule, examples))) is not None:
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


def check_rules(rules: Sequence[Rule], engine: str = "auto", others: Sequence[Rule] = ()) -> SelfCheck:
    """Every `match` example must fire its rule and no `no_match` example may. `others`: rules
    loaded beside these (the bundled ones beside a user's), whose examples also tell which words
    are common in logs."""
    matcher = Matcher(rules, engine)
    failures: list[Problem] = []
    warnings: list[Problem] = []
    examples = 0
    corpus = {
        rule.id: "\n".join(rule.examples.match + rule.examples.no_match).lower() for rule in (*others, *rules)
    }
    for rule in rules:
        warnings.extend(_literal_warnings(rule, corpus))
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
