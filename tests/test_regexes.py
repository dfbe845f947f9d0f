"""Regexes are cached as the code `re` compiles them to: rebuilt from it, each finds what
`re.compile` finds; the package's own regexes come from a table an earlier run wrote; and code
that does not fit any more is compiled again."""

from __future__ import annotations

import array
import os
import pickle
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ascend_doctor import regexes
from ascend_doctor.match import prefilter
from ascend_doctor.match.matcher import Matcher
from ascend_doctor.rulebase.load import load_rulebase

LITERALS = Matcher(load_rulebase().rules, "python", use_cache=False)._index.literals
TEXT = b"\n".join(
    f"[ERROR] rank {key} step 12: {literal.text.upper() if key % 3 else literal.text} ok".encode()
    for key, literal in enumerate(LITERALS)
)
SOURCE = rb"EL0(?:004|005)(?<=L0004)|E[IZ]9999"
REBUILDS = pytest.mark.skipif(not regexes.REBUILDS, reason="only CPython's _sre checks the code it is given")


def _matches(regex: re.Pattern[bytes]) -> list[tuple[int, int]]:
    return [match.span() for match in regex.finditer(TEXT)]


def _not_compiled_again(*_args: object) -> None:
    raise AssertionError("compiled by re, not rebuilt from the cached code")


@REBUILDS
def test_the_prefilter_tries_rebuilt_from_their_cached_code_find_what_re_finds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fresh = prefilter.make_prefilter(LITERALS, "python", complete=True)
    state = pickle.loads(pickle.dumps(fresh.serialize()))
    sources = [entry for group in state if group is not None for entry in group[0]]
    expected = [_matches(re.compile(source)) for _first, source, _code in sources]
    assert all(code is not None for _first, _source, code in sources), "no code was kept"
    monkeypatch.setattr(regexes.re, "compile", _not_compiled_again)
    for (_first, source, code), matches in zip(sources, expected):
        rebuilt = regexes.rebuild(source, code)
        assert rebuilt.pattern == source
        assert _matches(rebuilt) == matches
    cached = prefilter.make_prefilter(LITERALS, "python", complete=True, cached=state)
    monkeypatch.undo()
    assert list(cached.spans(TEXT)) == list(fresh.spans(TEXT))


@REBUILDS
@pytest.mark.parametrize(
    ("source", "flags", "text"),
    [
        (r"(?P<level>[A-Z]+)\] (?P<module>\w+)\((\d+)", 0, "[ERROR] RUNTIME(1234,python)"),
        (r"^rank (\d+)$", re.MULTILINE | re.IGNORECASE, "x\nRANK 7\nrank 8"),
        (r"(?x) \b npu \b | 昇腾  # a comment", 0, "on NPU 昇腾 npu"),
        (rb"(?i)\[(?P<level>error|info)\]", re.ASCII, b"[ERROR] [info]"),
    ],
)
def test_a_regex_with_groups_and_flags_is_rebuilt_as_re_compiles_it(
    source: str | bytes, flags: int, text: str | bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = re.compile(source, flags)
    compiled, code = regexes.compile_with_code(source, flags)
    assert code is not None
    monkeypatch.setattr(regexes.re, "compile", _not_compiled_again)
    rebuilt = regexes.rebuild(source, code, flags)
    monkeypatch.undo()
    for pattern in (compiled, rebuilt):
        assert pattern == expected  # the same source, flags and code
        assert (pattern.groups, pattern.groupindex) == (expected.groups, expected.groupindex)
        assert [match.groups() for match in pattern.finditer(text)] == [
            match.groups() for match in expected.finditer(text)
        ]


@REBUILDS
def test_a_run_rebuilds_the_regexes_an_earlier_run_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    source = r"(?P<code>E[A-Z]\d{4}): (?P<message>.*) \(unique to this test\)"

    def fresh_process() -> None:
        for name, value in (("_table", None), ("_used", set()), ("_added", {}), ("_built", {})):
            monkeypatch.setattr(regexes, name, value)

    fresh_process()
    first = regexes.regex(source)
    assert regexes.regex(source) is first
    regexes.save()
    assert [path.name[:8] for path in (tmp_path / "ascend-doctor").iterdir()] == ["regexes-"]
    fresh_process()
    monkeypatch.setattr(regexes.re, "compile", _not_compiled_again)
    rebuilt = regexes.regex(source)
    monkeypatch.undo()
    assert rebuilt.search("EL0004: Failed (unique to this test)").group("code", "message") == (
        "EL0004",
        "Failed",
    )


def test_code_that_no_longer_fits_is_compiled_again() -> None:
    regex, code = regexes.compile_with_code(SOURCE)
    if code is None:
        pytest.skip("this interpreter's regexes are not rebuilt")
    flags, words, groups, names = code
    bad_opcode = array.array("I", [999]).tobytes() + words
    for broken in (
        (flags, words[:-12], groups, names),
        (flags, bad_opcode, groups, names),
        ("flags", words, groups, names),
        (flags, words, groups, {"name": 7}),
    ):
        assert _matches(regexes.rebuild(SOURCE, broken)) == _matches(regex) != []


@REBUILDS
def test_a_damaged_entry_is_compiled_again_and_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    source = r"(?P<code>E[A-Z]\d{4}) damaged in the table"
    _pattern, good = regexes.compile_with_code(source)
    assert good is not None
    flags, words, groups, _names = good
    key = (str, source, 0)
    for damaged in ((flags, words, groups, {"code": 0}), (flags, words, 10**9, {}), ("flags",), None):
        monkeypatch.setattr(regexes, "_table", {key: damaged})
        monkeypatch.setattr(regexes, "_built", {})
        monkeypatch.setattr(regexes, "_added", {})
        assert regexes.regex(source).search("EL0004 damaged in the table").group("code") == "EL0004"
        assert regexes._added == {key: good}


def test_the_same_text_as_str_and_as_bytes_gives_two_patterns() -> None:
    """`"ab"` and `b"ab"` hash alike; a run under `python -bb` would fail comparing them."""
    assert regexes.regex("same text").pattern == "same text"
    assert regexes.regex(b"same text").pattern == b"same text"
    done = subprocess.run(
        [sys.executable, "-bb", "-c", "import ascend_doctor.read.events, ascend_doctor.read.sources"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_a_pattern_re_refuses_is_refused_as_re_refuses_it() -> None:
    with pytest.raises(re.error):
        regexes.regex(r"(?P<broken")


@pytest.mark.parametrize(("options", "written"), [((), ["regexes-", "rules-"]), (("--no-cache",), [])])
def test_no_cache_leaves_the_cache_as_it_found_it(
    tmp_path: Path, options: tuple[str, ...], written: list[str]
) -> None:
    log = tmp_path / "train.log"
    log.write_text("EL0004: Failed to allocate memory\n")
    done = subprocess.run(
        [sys.executable, "-m", "ascend_doctor", "diagnose", *options, str(log), "--exit-zero"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")},
    )
    assert done.returncode == 0, done.stderr
    cache = tmp_path / "cache" / "ascend-doctor"
    found = sorted({path.name.split("-")[0] + "-" for path in cache.iterdir()}) if cache.exists() else []
    assert [name for name in found if name in ("regexes-", "rules-")] == written
