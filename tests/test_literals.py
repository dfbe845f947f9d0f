"""Literal extraction is sound: every text a pattern matches holds one literal of each set it
names. A set that missed a match would make the prefilter drop a real failure."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from ascend_doctor.match.literals import Literal, literal_sets
from ascend_doctor.rulebase.load import load_rulebase

PATTERNS = sorted({pattern for rule in load_rulebase(use_cache=False).rules for pattern in rule.patterns})


def _holds_one(text: str, literals: tuple[Literal, ...]) -> bool:
    folded = text.lower()
    return any((lit.text.lower() in folded) if lit.ignore_case else (lit.text in text) for lit in literals)


def _sound(pattern: str, text: str) -> None:
    prefilter, others = literal_sets(pattern)
    assert prefilter, pattern
    assert _holds_one(text, prefilter), f"{pattern!r} matched {text!r} without {prefilter}"
    for needed in others:
        assert _holds_one(text, needed), f"{pattern!r} matched {text!r} without {needed}"


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"(?:207007|207019)\b", {"207007", "207019"}),  # not the common prefix `2070`
        (r"\bE(?![ZH]9999)[1-3A-B]9999\b", {"E19999", "E29999", "E39999", "EA9999", "EB9999"}),
        (r"error ?code", {"errorcode", "error code"}),
        (r"EL000[89]", {"EL0008", "EL0009"}),
        (r"ACL_ERROR_\w+_TIMEOUT", {"ACL_ERROR_"}),  # `\w+` ends the run: no spelling of it
        # A group is part of the run around it, and a phrase of plain words (in the lines of
        # many warnings) counts for less than code-like text of about its length.
        (r"\bdtype (?P<dtype>DT_[A-Z0-9_]+)\b[^\n]{0,120}?\bnot support", {"dtype DT_"}),
        (r"(?P<op>\w+Operation)(?:_\d+)? (?i:infer ?shape) fail", {"infershape", "infer shape"}),
        (r"\d+ of (\w+) failed to allocate memory", {" failed to allocate memory"}),
        # A number is in every line of a log, far more than a word of about its length.
        (r"\baclop\w+[^\n]{0,80}?ret\s*100024\b", {"aclop"}),
    ],
)
def test_classes_and_alternations_are_spelled_out(pattern: str, expected: set[str]) -> None:
    prefilter, _ = literal_sets(pattern)
    assert prefilter is not None
    assert {literal.text for literal in prefilter} == expected


def test_a_class_too_wide_to_spell_keeps_the_run_before_it() -> None:
    prefilter, _ = literal_sets(r"rtError[0-9a-zA-Z]{2}\d+")
    assert prefilter == (Literal("rtError", False),)


# In groups of ten: Hypothesis (6.170) overflows the stack after ~950 runs of one parametrized
# @given test in a process, and the rule base has more patterns than that.
PATTERN_GROUPS = [PATTERNS[start : start + 10] for start in range(0, len(PATTERNS), 10)]


@pytest.mark.parametrize("patterns", PATTERN_GROUPS, ids=lambda group: group[0][:40])
# No shrinking: the drawn match is already short, and shrinking 600 patterns' failures takes long.
@settings(max_examples=5, deadline=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_match_of_a_bundled_pattern_holds_its_literals(
    patterns: list[str], data: st.DataObject
) -> None:
    for pattern in patterns:
        compiled = re.compile(pattern)
        text = data.draw(st.from_regex(compiled))
        match = compiled.search(text)
        assert match is not None
        _sound(pattern, match.group(0))
