"""Every bundled rule's own examples, one test each: `rule.id/match[0]`, `rule.id/no_match[1]`."""

from __future__ import annotations

from io import BytesIO

import pytest

from ascend_doctor.match.matcher import Matcher
from ascend_doctor.match.scanner import StreamScanner
from ascend_doctor.rulebase.load import load_rulebase

RULES = load_rulebase(use_cache=False).rules
MATCHER = Matcher(RULES, "python")
CASES = [
    pytest.param(rule.id, line, kind == "match", id=f"{rule.id}/{kind}[{index}]")
    for rule in RULES
    for kind in ("match", "no_match")
    for index, line in enumerate(getattr(rule.examples, kind))
]


def _fired(rule_id: str, line: str) -> bool:
    result = StreamScanner(MATCHER, "<example>", 0).scan(BytesIO(line.encode("utf-8")))
    return any(match.rule_id == rule_id for match in result.matches)


@pytest.mark.parametrize(("rule_id", "line", "should_fire"), CASES)
def test_example(rule_id: str, line: str, should_fire: bool) -> None:
    fired = _fired(rule_id, line)
    if should_fire:
        assert fired, f"missed: {rule_id} did not match its own example"
    else:
        assert not fired, f"unexpected: {rule_id} matched its own near miss"
