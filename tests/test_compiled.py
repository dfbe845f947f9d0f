"""The pure-Python prefilter's regexes are cached as their compiled code: rebuilt from it, each
finds what `re.compile` finds, and code that does not fit any more is compiled again."""

from __future__ import annotations

import array
import pickle
import re

import pytest

from ascend_doctor.match import compiled, prefilter
from ascend_doctor.match.matcher import Matcher
from ascend_doctor.rulebase.load import load_rulebase

LITERALS = Matcher(load_rulebase().rules, "python", use_cache=False)._index.literals
TEXT = b"\n".join(
    f"[ERROR] rank {key} step 12: {literal.text.upper() if key % 3 else literal.text} ok".encode()
    for key, literal in enumerate(LITERALS)
)
SOURCE = rb"EL0(?:004|005)(?<=L0004)|E[IZ]9999"


def _matches(regex: re.Pattern[bytes]) -> list[tuple[int, int]]:
    return [match.span() for match in regex.finditer(TEXT)]


@pytest.mark.skipif(not compiled.REBUILDS, reason="only CPython's _sre checks the code it is given")
def test_a_regex_rebuilt_from_its_cached_code_finds_what_re_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    fresh = prefilter.make_prefilter(LITERALS, "python", complete=True)
    state = pickle.loads(pickle.dumps(fresh.serialize()))
    sources = [entry for group in state if group is not None for entry in group[0]]
    expected = [_matches(re.compile(source)) for _first, source, _code in sources]
    assert all(code is not None for _first, _source, code in sources), "no code was kept"

    def not_compiled_again(*_args: object) -> None:
        raise AssertionError("compiled by re, not rebuilt from the cached code")

    monkeypatch.setattr(compiled.re, "compile", not_compiled_again)
    for (_first, source, code), matches in zip(sources, expected):
        rebuilt = compiled.rebuild(source, code)
        assert rebuilt.pattern == source
        assert _matches(rebuilt) == matches
    cached = prefilter.make_prefilter(LITERALS, "python", complete=True, cached=state)
    monkeypatch.undo()
    assert list(cached.spans(TEXT)) == list(fresh.spans(TEXT))


def test_code_that_no_longer_fits_is_compiled_again() -> None:
    regex, code = compiled.compile_with_code(SOURCE)
    if code is None:
        pytest.skip("this interpreter's regexes are not rebuilt")
    flags, words, groups = code
    bad_opcode = array.array("I", [999]).tobytes() + words
    for broken in ((flags, words[:-12], groups), (flags, bad_opcode, groups), ("flags", words, groups)):
        assert _matches(compiled.rebuild(SOURCE, broken)) == _matches(regex) != []


def test_a_pattern_that_cannot_be_rebuilt_keeps_no_code() -> None:
    regex, code = compiled.compile_with_code(rb"(?P<code>E[A-Z]\d{4})")
    assert code is None
    assert regex.findall(b"EL0004 EZ9999") == [b"EL0004", b"EZ9999"]
