"""The pure-Python prefilter's regexes are cached as their compiled code: rebuilt from it, each
finds what `re.compile` finds, and code that does not fit any more is compiled again."""

from __future__ import annotations

import pickle
import re

from ascend_doctor.match import compiled, prefilter
from ascend_doctor.match.matcher import Matcher
from ascend_doctor.rulebase.load import load_rulebase

LITERALS = Matcher(load_rulebase().rules, "python", use_cache=False)._index.literals
TEXT = b"\n".join(
    f"[ERROR] rank {key} step 12: {literal.text.upper() if key % 3 else literal.text} ok".encode()
    for key, literal in enumerate(LITERALS)
)


def _matches(regex: re.Pattern[bytes]) -> list[tuple[int, int]]:
    return [match.span() for match in regex.finditer(TEXT)]


def test_a_regex_rebuilt_from_its_cached_code_finds_what_re_finds() -> None:
    fresh = prefilter.make_prefilter(LITERALS, "python", complete=True)
    state = pickle.loads(pickle.dumps(fresh.serialize()))
    sources = [entry for group in state if group is not None for entry in group[0]]
    assert all(code is not None for _first, _source, code in sources), "no code was kept"
    for _first, source, code in sources:
        rebuilt = compiled.rebuild(source, code)
        assert rebuilt.pattern == source
        assert _matches(rebuilt) == _matches(re.compile(source))
    cached = prefilter.make_prefilter(LITERALS, "python", complete=True, cached=state)
    assert list(cached.spans(TEXT)) == list(fresh.spans(TEXT))


def test_code_that_no_longer_fits_is_compiled_again() -> None:
    source = rb"EL0(?:004|005)(?<=L0004)|E[IZ]9999"
    regex, code = compiled.compile_with_code(source)
    assert code is not None
    flags, ints, groups = code
    for broken in ((flags, ints[:-3], groups), (flags, [999, *ints], groups), ("flags", ints, groups)):
        assert _matches(compiled.rebuild(source, broken)) == _matches(regex) != []
