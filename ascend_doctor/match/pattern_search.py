"""A rule's pattern, searched with the standard `re` where that finds what `regex` finds.

Rules are written in `regex`'s syntax, and `regex` gives every search a time limit. But importing
it costs a run ~15 ms, a fifth of diagnosing a small log. A pattern written only in the plain
syntax both modules share (`_plain_form` accepts nothing else), on text of characters both read
alike, finds the same match with either (`tests/test_pattern_search.py` compares them on every
bundled pattern, on random ones, and on the constructs where they are known to differ), so `re`
is tried first there.

`re` has no time limit of its own. It runs only under a SIGVTALRM timer of CPU time, lent by
`alarm_clock` to the thread that runs a scan, and only briefly: a pattern it cannot finish in
RE_BUDGET, or that makes it fail, is searched with `regex` from then on. `regex` also guards
against some backtracking that `re` does not (`(a+)+$`), so whatever `re` leaves unanswered gets
the answer `regex` alone would have given.
"""

from __future__ import annotations

import re
import signal
from _thread import get_ident  # `threading` would cost an import
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

from ascend_doctor import regexes

RE_BUDGET = 0.02  # CPU seconds: a busy machine does not make `re` give up
# `re` checks for signals every few thousand steps, and a step on a long text can be long: longer
# texts go to `regex`, whose time limit is exact.
PLAIN_TEXT_MAX = 8192
# The syntax `_plain_form` accepts, token by token: no POSIX or nested sets, set operations,
# possessive or atomic matching, backreferences, conditionals, verbose mode, fuzzy braces or
# escapes of characters by code, where the two modules differ or `re` has had bugs.
_PLAIN_TOKEN = regexes.regex(
    r"""
      (?P<quantifier> (?: [*+?] | \{\d+(?:,\d*)?\} | \{,\d+\} ) \?? )
    | (?P<set> \[ \^? (?: \\[dswntr] | \\[^A-Za-z0-9] | [^\\\[\]] )+ \] )
    | (?P<flags> \(\?[ims]+\) )
    | (?P<group> \( (?: \?(?: [:=!] | <[=!] | P<[A-Za-z_]\w*> | [ims]+: ) )? )
    | (?P<atom> \\[dswDSWntr] | \\[^A-Za-z0-9] | [^\\\[\](){}|^$*+?] | [.)] )
    | (?P<anchor> \\[bBAZ] | [|^$] )
    """,
    re.VERBOSE,
)
_SET_OPERATIONS = ("--", "&&", "~~", "||")  # `re` warns of them: future set operations
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
_ODD_SPACE = regexes.regex("[\x1c-\x1f]")

_lent_to: int | None = None  # the thread whose scan holds SIGVTALRM (`alarm_clock`)
_armed = False  # a `re` search is running under the timer


class RulePattern:
    """One pattern of a rule, compiled when first needed by each module that searches with it."""

    __slots__ = ("_full", "_plain", "source")

    def __init__(self, source: str) -> None:
        self.source = source
        self._plain: re.Pattern[str] | None = None  # or _REGEX_ONLY
        self._full: Any = None

    def search(self, text: str, timeout: float, try_re: bool = True) -> Any:
        """The first match in `text`, or None; TimeoutError after `timeout` seconds of `regex`.
        `try_re` False: `regex` alone, as the plain path of the equivalence tests searches."""
        if try_re and self._plain is not _REGEX_ONLY and _lent_to == get_ident() and _plain_text(text):
            if self._plain is None:
                self._plain = _plain_form(self.source) or _REGEX_ONLY
            if self._plain is not _REGEX_ONLY:
                try:
                    return _limited(self._plain.search, text)
                except Exception:  # over budget, or a fault of `re`'s own (SystemError)
                    self._plain = _REGEX_ONLY
        if self._full is None:
            import regex

            self._full = regex.compile(self.source)
        return self._full.search(text, timeout=timeout)


_REGEX_ONLY: Any = object()  # a pattern `re` must not search


def _plain_form(source: str) -> re.Pattern[str] | None:
    """`source` compiled by `re`, if it is written only in the syntax both modules read alike."""
    if not source.isascii():
        return None
    position = 0
    after_atom = False
    while position < len(source):
        token = _PLAIN_TOKEN.match(source, position)
        if token is None:
            return None
        kind = token.lastgroup
        if kind == "quantifier" and not after_atom:  # `a*+` is possessive, `^*` an error
            return None
        if kind == "flags" and position > 0:
            return None
        if kind == "set" and any(operation in token.group() for operation in _SET_OPERATIONS):
            return None
        after_atom = kind in ("atom", "set")
        position = token.end()
    try:
        return regexes.regex(source)
    except (re.error, OverflowError, RecursionError):
        return None


def _plain_text(text: str) -> bool:
    """Whether `re` may search `text`: every character agreed, not too long, and not empty (`\\B`
    matches an empty text for `regex`, and for `re` only from Python 3.14)."""
    if len(text) > PLAIN_TEXT_MAX:
        return False
    if text.isascii():
        return bool(text) and not _ODD_SPACE.search(text)
    return not _disputed().search(text)


@cache
def _disputed() -> re.Pattern[str]:
    """Compiled on the first line that is not ASCII: `re` takes ~3 ms to compile these ranges."""
    return regexes.regex(_DISPUTED)


def _limited(search: Any, text: str) -> Any:
    global _armed
    try:
        _armed = True
        signal.setitimer(signal.ITIMER_VIRTUAL, RE_BUDGET)
        return search(text)
    finally:
        _armed = False
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)


class _OverBudget(Exception):
    """`re` did not finish in RE_BUDGET."""


def _over_budget(_signal: int, _frame: Any) -> None:
    """SIGVTALRM while lent: stop the `re` search, if one is still running (`re` checks for
    signals as it backtracks). A signal that arrives after the search ended is ignored."""
    global _armed
    if _armed:
        _armed = False
        raise _OverBudget


@contextmanager
def alarm_clock() -> Iterator[None]:
    """Lend SIGVTALRM to the `re` searches of this thread's scan, if it is free: in the main
    thread (the only one that runs signal handlers), with the default handler and no timer
    running. Otherwise every search uses `regex` (same findings)."""
    global _lent_to
    free = (
        _lent_to is None
        and hasattr(signal, "setitimer")
        and signal.getsignal(signal.SIGVTALRM) == signal.SIG_DFL
        and signal.getitimer(signal.ITIMER_VIRTUAL) == (0.0, 0.0)
    )
    try:
        previous = signal.signal(signal.SIGVTALRM, _over_budget) if free else None
    except ValueError:  # not the main thread
        previous = None
    if previous is None:
        yield
        return
    _lent_to = get_ident()
    try:
        yield
    finally:
        _lent_to = None
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)  # an interrupted search may have left it running
        signal.signal(signal.SIGVTALRM, previous)
