"""Searching with `re` instead of `regex` changes no finding: on every bundled pattern, on random
patterns, on text `re` reads differently, and when `re` backtracks where `regex` does not. And the
time limit `re` runs under never disturbs a program's own use of SIGALRM."""

from __future__ import annotations

import contextlib
import re
import signal
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import regex
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from ascend_doctor.match import pattern_search
from ascend_doctor.match.pattern_search import RulePattern, alarm_clock
from ascend_doctor.rulebase.load import load_rulebase
from tests.conftest import FIXTURES
from tests.processes import run_watching_import

RULES = load_rulebase(use_cache=False).rules
PATTERNS = sorted({pattern for rule in RULES for pattern in rule.patterns})
ASCII = st.characters(max_codepoint=127)


def _outcome(found: Any) -> Any:
    return found and (found.span(), found.groupdict(), found.groups())


def _same(pattern: str, text: str) -> None:
    """RulePattern, with the clock lent, finds what `regex` finds."""
    try:
        expected = _outcome(regex.compile(pattern).search(text, timeout=5))
    except (TimeoutError, MemoryError):  # `regex` gives up on some nested fuzzy matches
        return
    with alarm_clock():
        assert _outcome(RulePattern(pattern).search(text, 5)) == expected, (pattern, text)


def test_every_bundled_pattern_is_written_in_the_syntax_re_may_search() -> None:
    refused = [pattern for pattern in PATTERNS if pattern_search._plain_form(pattern) is None]
    assert refused == [], "these bundled patterns would make every run import `regex`"


# Where `re` reads a pattern otherwise than `regex`, or has had bugs (3.9-3.13): each is refused.
DIFFERENT = [
    ("DeviceLost device=(?P<dev>[^[:space:]]+)", "DeviceLost device=npu:3 at step 10"),  # POSIX class
    ("EL0004 [[:digit:]]+", "EL0004 42"),
    ("[a[:digit:]]", "7"),
    ("code=(?:\\d+){2}+", "code=12"),  # possessive: `re` finds nothing
    ("ERR(?:(\\w.?)+a++|\\w)++", "ERRaab"),  # possessive: SystemError in `re`
    ("(?>ab|a)b", "ab"),
    ("(?P<g>a+)*(?P=g)", "aaa"),  # a backreference to a group in a repeat
    ("(a+)*\\1", "aaa"),
    ("(?P<g>(?(g).))*", "b"),  # a conditional on its own group
    ("[^\\s\\S]", "x"),  # any character to `regex`, none to `re`
    ("x{e<=1}", "a"),  # fuzzy to `regex`, a literal to `re`
    ("(?i)\\u0131", "I"),  # case folding of a character named by code
    ("(?x)a b", "ab"),
    ("[a-c--b]", "b"),
    ("[a&&b]", "&"),
    ("(?i)a(?m)b", "AB"),
]


@pytest.mark.parametrize(("pattern", "text"), DIFFERENT)
def test_what_re_reads_otherwise_is_left_to_regex(pattern: str, text: str) -> None:
    with warnings.catch_warnings(), contextlib.suppress(re.error):
        warnings.simplefilter("ignore")
        re.compile(pattern)  # in `re`'s cache, where its warnings are not given again
    assert pattern_search._plain_form(pattern) is None
    _same(pattern, text)


# Patterns in groups: Hypothesis (6.170) overflows the stack after ~950 runs of one parametrized
# @given test in a process, and the rule base has more patterns than that.
GROUP = 10
PATTERN_GROUPS = [PATTERNS[start : start + GROUP] for start in range(0, len(PATTERNS), GROUP)]


@pytest.mark.parametrize("patterns", PATTERN_GROUPS, ids=lambda group: group[0][:40])
# No shrinking: a failure is a pattern and one text, short already.
@settings(
    max_examples=6,
    deadline=None,
    phases=[Phase.generate],
    suppress_health_check=list(HealthCheck),
    derandomize=True,
    database=None,
)
@given(data=st.data())
def test_bundled_patterns_match_the_same_as_with_regex(patterns: list[str], data: st.DataObject) -> None:
    for pattern in patterns:
        text = data.draw(st.from_regex(re.compile(pattern), alphabet=ASCII))
        cut = data.draw(st.integers(0, len(text)))
        for variant in (text, text[:cut] + text[cut + 1 :], text.upper(), f"[ERROR] {text.lower()} (rank 3)"):
            _same(pattern, variant)


def test_bundled_patterns_on_every_example_of_their_file() -> None:
    texts: dict[str, list[str]] = {}
    for rule in RULES:
        texts.setdefault(rule.id.split(".")[0], []).extend(rule.examples.match + rule.examples.no_match)
    for rule in RULES:
        for pattern in rule.patterns:
            for text in texts[rule.id.split(".")[0]]:
                _same(pattern, text)


def test_bundled_patterns_on_the_fixture_logs() -> None:
    lines = {line for log in FIXTURES.glob("*.log") for line in log.read_text(errors="replace").splitlines()}
    wanted = [line for line in lines if any(mark in line for mark in ("E", "rror", "rank", "NPU", "HCCL"))]
    for pattern in PATTERNS:
        compiled = re.compile(pattern)
        for line in wanted:
            if compiled.search(line) or len(wanted) < 400:
                _same(pattern, line)


_ATOMS = [
    "a",
    "b",
    "A",
    "k",
    "s",
    "i",
    " ",
    ":",
    "-",
    "_",
    "0",
    "7",
    r"\.",
    ".",
    "[ab]",
    "[^a ]",
    "[a-c]",
    "[A-Z]",
]
_CLASSES = [r"\s", r"\S", r"\w", r"\W", r"\d", r"\b", r"\B", "^", "$", r"\Z", r"\1", "(?(1)a|b)", "(?P=g0)"]
# Where the two modules read a pattern differently, or fold case differently.
_ODD = [
    "[Z-a]",
    "[[:alpha:]]",
    "[a[:digit:]]",
    "[^\\s\\S]",
    r"\u0131",
    "\u017f",
    "\u212a",
    "{e<=1}",
    "{1, 2}",
    "{",
    "}",
]
_PIECES = st.sampled_from([*_ATOMS, *_CLASSES, *_ODD])
_GROUPS = [
    "({})",
    "(?:{})",
    "(?P<g{}>{{}})",
    "(?={})",
    "(?!{})",
    "(?<=a{})",
    "(?<!b{})",
    "(?>{})",
    "(?i:{})",
    "({}|b)",
]
_QUANTIFIERS = st.sampled_from(
    ["", "", "*", "+", "?", "{2}", "{1,3}", "{,2}", "*?", "+?", "??", "++", "*+", "{2}+"]
)


@st.composite
def _patterns(draw: st.DrawFn, depth: int = 0) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        if depth < 2 and draw(st.booleans()):
            inner = draw(_patterns(depth + 1))
            shape = draw(st.sampled_from(_GROUPS))
            piece = shape.replace("{}", inner) if "g{}" not in shape else shape.format(depth).format(inner)
        else:
            piece = draw(_PIECES)
        parts.append(piece + draw(_QUANTIFIERS))
    return draw(st.sampled_from(["", "(?i)", "(?m)"])) + "".join(parts)


@settings(max_examples=1500, deadline=None, derandomize=True, database=None)
@given(
    pattern=_patterns(),
    text=st.text(
        st.sampled_from(
            "abABkKsSiI :-_07.\t\n\x1c\u0131\u017f\u212a\u4e2d\u2588\uff21\uff41\uff3f\u302a\ufffd"
        ),
        max_size=12,
    ),
)
def test_random_patterns_match_the_same_as_with_regex(pattern: str, text: str) -> None:
    try:
        regex.compile(pattern)
    except Exception:  # not a pattern; or one `regex` itself fails on, `(?i)[^\\s\\S]`
        return
    _same(pattern, text)


def test_every_character_searched_by_re_is_read_alike_by_both_modules() -> None:
    agreed = "".join(c for c in map(chr, range(sys.maxunicode + 1)) if pattern_search._plain_text(c))
    assert "\u2588" in agreed and "\u4e2d" in agreed and "a" in agreed  # `█`, `中`
    assert "\x1c" not in agreed and "\u0131" not in agreed and "\uff3f" not in agreed
    # Each character beside ASCII letters and spaces, to test word boundaries in both directions.
    texts = [agreed, "".join(f"{c}a {c}" for c in agreed)]
    asks = [r"\d", r"\s", r"\w", r"\D", r"\S", r"\W", ".", r"\b.", r".\b", r"\B.", r"(?i)\w", r"(?i)[^a-z]"]
    for letter in "abcdefghijklmnopqrstuvwxyz":
        asks += [f"(?i){letter}", f"(?i)[{letter}-z]", f"(?i)[^{letter}]"]
    for ask in asks:
        for text in texts:
            assert [m.span() for m in re.finditer(ask, text)] == [
                m.span() for m in regex.finditer(ask, text)
            ], ask
    cased = [c + c.swapcase() for c in agreed if c.swapcase() != c and len(c.swapcase()) == 1]
    assert len(cased) > 100
    for pair in cased:
        assert bool(re.fullmatch(r"(?i)(.)\1", pair)) == bool(regex.fullmatch(r"(?i)(.)\1", pair)), pair


HOSTILE = "ShardError: " + "a" * 40 + "!"


def test_a_pattern_re_cannot_finish_gets_regexs_answer() -> None:
    # In a process of its own, so that a broken time limit fails the test instead of hanging it.
    probe = (
        "from ascend_doctor.match.pattern_search import RulePattern, alarm_clock\n"
        "nested = RulePattern(r'ShardError: (a+)+$')\n"  # `re` backtracks for ages; `regex` sees through it
        "with alarm_clock():\n"
        f"    print(nested.search({HOSTILE!r}, 5), nested.search('ShardError: aaa', 5).span())\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["None", "(0,", "15)"], done.stderr


def test_the_clock_is_given_back_and_stopped() -> None:
    with alarm_clock():
        assert signal.getsignal(signal.SIGVTALRM) != signal.SIG_DFL
        signal.setitimer(signal.ITIMER_VIRTUAL, 5)  # as a search cut short by Ctrl-C would leave it
    assert signal.getsignal(signal.SIGVTALRM) == signal.SIG_DFL
    assert signal.getitimer(signal.ITIMER_VIRTUAL) == (0.0, 0.0)


@contextlib.contextmanager
def _timer_running(handler: Any) -> Iterator[None]:
    previous = signal.signal(signal.SIGVTALRM, handler)
    try:
        signal.setitimer(signal.ITIMER_VIRTUAL, 30)
        yield
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, previous)


def _own(_signal: int, _frame: Any) -> None:
    raise AssertionError("the program's timer went off during the test")


@pytest.mark.parametrize("handler", [_own, signal.SIG_DFL], ids=["own handler", "default handler"])
def test_a_programs_own_timer_is_left_alone(handler: Any) -> None:
    with _timer_running(handler):
        with alarm_clock():
            assert signal.getsignal(signal.SIGVTALRM) == handler
            _same(r"ShardError: (a+)+$", HOSTILE)
        assert signal.getsignal(signal.SIGVTALRM) == handler
        assert signal.getitimer(signal.ITIMER_VIRTUAL)[0] > 20


def test_another_thread_searches_with_regex_while_the_main_thread_holds_the_clock() -> None:
    # Only the main thread runs signal handlers: `re` in another thread would run uncut.
    searched = RulePattern(r"EL0004: (?P<what>\w+)")
    outcomes: list[Any] = []

    def scan() -> None:
        with alarm_clock():  # not the main thread: nothing is lent
            outcomes.append(_outcome(searched.search("EL0004: Failed", 5)))

    with alarm_clock():
        worker = threading.Thread(target=scan)
        worker.start()
        worker.join()
    assert outcomes == [((0, 14), {"what": "Failed"}, ("Failed",))]
    assert searched._full is not None, "searched by `re`, which no timer could have cut"


def test_a_small_log_is_diagnosed_without_importing_regex(tmp_path: Path) -> None:
    turkish = tmp_path / "turkish.log"  # `ı` folds to `I` for `re`, not for `regex`
    turkish.write_text("EL0004: Failed to allocate memory (kullan\u0131c\u0131 3)\n", encoding="utf-8")
    # The first run may read the rule files, whose check compiles them with `regex`: it only fills the cache.
    # The second log has a progress bar (`██`) on the line before the error, joined with it as a
    # hard-wrapped message would be.
    logs = [
        FIXTURES / "memory-npu-oom-leftover-process.log",
        FIXTURES / "cann-e40001-path-too-long.log",
        turkish,
    ]
    imported = []
    for log in [logs[0], *logs]:
        done, regex_imported = run_watching_import("regex", ["diagnose", str(log)])
        assert done.returncode == 1, done.stderr
        imported.append(regex_imported)
    assert imported[1:] == [False, False, True]
