"""A rule's pattern, searched with the standard `re` where that finds what `regex` finds.

Rules are written in `regex`'s syntax, and `regex` gives every search a time limit. But importing
it costs a run ~15 ms, a fifth of diagnosing a small log. On text of characters both modules read
alike, a pattern `re` reads the same way finds the same match with either module
(`tests/test_pattern_search.py` compares them on every bundled pattern and on random ones), so
`re` is tried first there.

`re` has no time limit of its own. It runs only under a SIGALRM timer, lent by `alarm_clock` while a
scan runs, and only briefly: a pattern it cannot finish in RE_BUDGET is searched with `regex`
from then on. `regex` also guards against some backtracking that `re` does not (`(a+)+$`), so
whatever `re` leaves unanswered gets the answer `regex` alone would have given.
"""

from __future__ import annotations

import re
import signal
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

RE_BUDGET = 0.02
# Case folding differs between the modules for some non-ASCII characters, which these escapes can
# name (a backreference `\1` is refused with them: only `regex` is used then, which is safe).
_WIDE_ESCAPE = re.compile(r"\\[uUNx0-9]")
# A brace that is not a repeat is a literal to `re` but may be fuzzy matching to `regex` (`{e<=1}`).
_BRACE = re.compile(r"\\.|\{[^}]*\}?", re.DOTALL)
_REPEAT = re.compile(r"\{\d*(?:,\d*)?\}")
# The characters on which both modules agree in every way a pattern can ask (`\w`, `\d`, `\s`, `\b`,
# case): ASCII but the separators \x1c-\x1f, which only `re` takes for white space, and the
# non-ASCII ones common in logs. Those are box drawing and blocks (progress bars, tracebacks drawn
# by rich), punctuation, arrows, U+FFFD (an undecodable byte) and CJK: the ideographs of GBK, not
# newer ones an older Python does not know, and not the marks and the fullwidth `＿` that only
# `regex` counts as `\w`. `tests/test_pattern_search.py` checks every one.
_DISPUTED = (
    r"[^\x00-\x1b\x20-\x7f\u00b7\u00d7\u2010-\u2027\u2190-\u21ff\u2500-\u259f"
    r"\u3000-\u3029\u3030-\u303f\u4e00-\u9fa5\uff01-\uff3e\uff40-\uff5e\ufffd]"
)
_ODD_SPACE = re.compile("[\x1c-\x1f]")

_clock_lent = False  # SIGALRM is ours: a scan is running in `alarm_clock`
_armed = False  # a `re` search is running under the timer


class _OverBudget(Exception):
    """`re` did not finish in RE_BUDGET."""


class RulePattern:
    """One pattern of a rule, compiled when first needed by each module that searches with it."""

    __slots__ = ("_full", "_plain", "source")

    def __init__(self, source: str) -> None:
        self.source = source
        self._plain: re.Pattern[str] | bool | None = None  # False: `regex` only
        self._full: Any = None

    def search(self, text: str, timeout: float, try_re: bool = True) -> Any:
        """The first match in `text`, or None; TimeoutError after `timeout` seconds of `regex`.
        `try_re` False: `regex` alone, as the plain path of the equivalence tests searches."""
        if try_re and self._plain is not False and _clock_lent and _plain_text(text):
            if self._plain is None:
                self._plain = _plain_form(self.source) or False
            if not isinstance(self._plain, bool):
                try:
                    return _limited(self._plain.search, text)
                except _OverBudget:
                    self._plain = False
        if self._full is None:
            import regex

            self._full = regex.compile(self.source)
        return self._full.search(text, timeout=timeout)


def _plain_form(source: str) -> re.Pattern[str] | None:
    """`source` compiled by `re`, if `re` reads it as `regex` does; else None."""
    if not source.isascii() or _WIDE_ESCAPE.search(source):
        return None
    if any(token[0] == "{" and not _REPEAT.fullmatch(token) for token in _BRACE.findall(source)):
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # `re` warns where `regex` reads a nested set: `[[:alpha:]]`
        try:
            return re.compile(source)
        except (re.error, Warning, OverflowError, RecursionError):
            return None


def _plain_text(text: str) -> bool:
    """Whether `re` reads `text` as `regex` does: every character agreed, and not empty (`\\B`
    matches an empty text for `regex`, and for `re` only from Python 3.14)."""
    if text.isascii():
        return bool(text) and not _ODD_SPACE.search(text)
    return not _disputed().search(text)


@cache
def _disputed() -> re.Pattern[str]:
    """Compiled on the first line that is not ASCII: `re` takes ~3 ms to compile these ranges."""
    return re.compile(_DISPUTED)


def _limited(search: Any, text: str) -> Any:
    global _armed
    _armed = True
    signal.setitimer(signal.ITIMER_REAL, RE_BUDGET)
    try:
        return search(text)
    finally:
        _armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)


def _over_budget(_signal: int, _frame: Any) -> None:
    """SIGALRM while lent: stop the `re` search, if one is still running (`re` checks for signals
    as it backtracks). A signal that arrives after the search ended is ignored."""
    global _armed
    if _armed:
        _armed = False
        raise _OverBudget


@contextmanager
def alarm_clock() -> Iterator[None]:
    """Lend SIGALRM to the `re` searches of a scan, if it is free: in the main thread, with the
    default handler and no timer running. Otherwise every search uses `regex` (same findings)."""
    global _clock_lent
    free = (
        not _clock_lent
        and hasattr(signal, "setitimer")
        and signal.getsignal(signal.SIGALRM) == signal.SIG_DFL
        and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    )
    try:
        previous = signal.signal(signal.SIGALRM, _over_budget) if free else None
    except ValueError:  # not the main thread
        previous = None
    if previous is None:
        yield
        return
    _clock_lent = True
    try:
        yield
    finally:
        _clock_lent = False
        signal.signal(signal.SIGALRM, previous)
