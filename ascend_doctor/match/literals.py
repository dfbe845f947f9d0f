"""Required literals of a regex: text every match must contain, for the prefilter.

The prefilter finds candidate lines by these literals; the full pattern then runs only there.
A pattern yields either one literal, or one literal per branch of an alternation, or nothing
(then the pattern must run on every line, and `rules test` says so).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    try:
        import re._parser as sre_parse  # type: ignore[import-not-found]
        from re import _constants as sre_constants  # type: ignore[attr-defined]
    except ImportError:  # Python < 3.11
        import sre_constants  # type: ignore[no-redef]
        import sre_parse  # type: ignore[no-redef]

MIN_LITERAL = 3
# A long literal is looked for by its head and its tail: a message hard-wrapped once inside
# the literal still leaves one of them whole on one line.
SPLIT_ABOVE = 32
PIECE = 16
# These characters are escaped in JSON-encoded logs; a literal never spans them.
_BREAKS = frozenset('"\\')
# A literal set spelled out from classes and alternations has at most this many texts.
MAX_SPELLINGS = 64
# Items that match no text: a literal run goes on across them.
_ZERO_WIDTH = (sre_constants.AT, sre_constants.ASSERT, sre_constants.ASSERT_NOT)


class Literal(NamedTuple):
    text: str
    ignore_case: bool


_Alternatives = tuple[Literal, ...]


def required_literals(pattern: str) -> _Alternatives | None:
    """Literals one of which is in every match of `pattern`, or None if there is no usable set."""
    parsed = _parse(pattern)
    if parsed is None:
        return None
    ignore_case = bool(parsed.state.flags & re.IGNORECASE)
    best = _best(_sequence(list(parsed), ignore_case))
    return None if best is None else tuple(piece for lit in best for piece in _wrap_safe(lit))


def common_literal(pattern: str, seen_elsewhere: Callable[[str], bool] = lambda word: True) -> str | None:
    """A prefilter literal of `pattern` so common in logs that most lines holding it are not this
    failure (each such line costs a look): shorter than 5 characters, a number shorter than 6, or one plain
    word ('failed', 'Warning', ' graph ') that `seen_elsewhere` finds in the lines of other failures too
    (by default every plain word counts). None when every literal is specific enough, or when the
    pattern also needs one of a set of specific literals (`error code` before `507011`): a line
    without that set is passed over by a byte check (`Matcher.worth`), not matched."""
    prefilter, others = literal_sets(pattern)
    common = next((lit.text for lit in prefilter or () if _common(lit.text, seen_elsewhere)), None)
    if common is None or any(not any(_common(lit.text, seen_elsewhere) for lit in need) for need in others):
        return None
    return common


def _common(text: str, seen_elsewhere: Callable[[str], bool]) -> bool:
    core = text.strip()
    if len(core) < 5 or (core.isdigit() and len(core) < 6):
        return True
    plain_word = core.isalpha() and core.isascii() and (core.islower() or core[1:].islower())
    return plain_word and len(core) <= 12 and seen_elsewhere(core)


def literal_sets(pattern: str) -> tuple[_Alternatives | None, tuple[_Alternatives, ...]]:
    """The pattern's prefilter literals (as `required_literals`) and every other set of literals
    that a match must also contain one of (used to skip lines cheaply, never to select them)."""
    parsed = _parse(pattern)
    if parsed is None:
        return None, ()
    ignore_case = bool(parsed.state.flags & re.IGNORECASE)
    candidates = _sequence(list(parsed), ignore_case)
    best = _best(candidates)
    if best is None:
        return None, ()
    others = []
    for alternatives in candidates:
        if alternatives is best or not alternatives:  # any length: these only skip work
            continue
        wrapped = tuple(piece for lit in alternatives for piece in _wrap_safe(lit))
        if wrapped not in others:
            others.append(wrapped)
    return tuple(piece for lit in best for piece in _wrap_safe(lit)), tuple(others)


def _parse(pattern: str) -> Any:
    """`re`'s parse of a `regex` pattern, or None where the two may read it differently: `re`
    warns (FutureWarning) on syntax that `regex` gives another meaning, such as `[[:alpha:]]`."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        try:
            return sre_parse.parse(pattern)
        except (re.error, RecursionError, OverflowError, ValueError, FutureWarning):
            return None


def _wrap_safe(literal: Literal) -> tuple[Literal, ...]:
    text = literal.text
    if len(text) <= SPLIT_ABOVE:
        return (literal,)
    return (Literal(text[:PIECE], literal.ignore_case), Literal(text[-PIECE:], literal.ignore_case))


# A phrase of plain words (`not support`) is in far more log lines than code-like text of
# the same length (`dtype DT_`): its length counts this much when literals are compared. A torch_npu
# warning repeated on every step made `not support` select 84,000 lines of the bench's 1 GB log.
PROSE_WEIGHT = 0.75
# A number is in more lines still: every line has a time, most a pid, a plog line a dozen numbers
# and pointers. A code as `100024` is found by a byte search through every line (see
# prefilter.BLURRED_MIN): 1.0 ms per MB of the bench's plog tree, where `aclop`, which the same
# pattern needs, is looked for only in the lines new to the run.
NUMBER_WEIGHT = 0.5


def _score(alternatives: _Alternatives) -> int:
    return min(len(literal.text) for literal in alternatives)


def _specificity(alternatives: _Alternatives) -> float:
    return min(len(literal.text) * _weight(literal.text) for literal in alternatives)


def _weight(text: str) -> float:
    if any(char.isdigit() for char in text) and not any(char.isalpha() for char in text):
        return NUMBER_WEIGHT  # `507011`, `=507011`: the bytes around a number are as common
    return PROSE_WEIGHT if _prose(text) else 1


def _prose(text: str) -> bool:
    """Plain words only: each lowercase or capitalized, with spaces and apostrophes between."""
    words = text.replace("'", " ").split()
    return all(word.isalpha() and word.isascii() and word[1:] == word[1:].lower() for word in words)


def _best(candidates: list[_Alternatives]) -> _Alternatives | None:
    usable = [alt for alt in candidates if alt and _score(alt) >= MIN_LITERAL]
    if not usable:
        return None
    return max(usable, key=lambda alt: (_specificity(alt), -len(alt)))


def _sequence(items: list[tuple[Any, Any]], ignore_case: bool) -> list[_Alternatives]:
    """Candidate literal sets from a sequence of regex items (each required in every match).
    Items with a few fixed spellings (`[789]`, `(?:07|08)`, `x?`) extend the run of text
    before them into every spelling: `2070(?:07|19)` needs `207007` or `207019`, not `2070`."""
    candidates: list[_Alternatives] = []
    run = [""]
    items = _inlined(items)

    def close_run() -> None:
        if "" not in run:  # a set holding the empty text requires nothing
            candidates.append(tuple(Literal(text, ignore_case) for text in run))

    for op, av in items:
        if op in _ZERO_WIDTH:
            continue
        spellings = _spellings(op, av, ignore_case)
        if spellings is not None:
            longer = _product(run, spellings)
            if longer is None:
                close_run()
                run = spellings
            else:
                run = longer
            continue
        close_run()
        run = [""]
        candidates.extend(_item(op, av, ignore_case))
    close_run()
    return candidates


def _inlined(items: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """The items with each group that sets no flag replaced by its own items: a literal run goes
    on into a group (`dtype (?P<dtype>DT_\\w+)` needs `dtype DT_`)."""
    flat: list[tuple[Any, Any]] = []
    for op, av in items:
        if op is sre_constants.SUBPATTERN and not (av[1] | av[2]):
            flat.extend(_inlined(list(av[3])))
        else:
            flat.append((op, av))
    return flat


def _spellings(op: Any, av: Any, ignore_case: bool) -> list[str] | None:
    """Every text one item can match, if that is at most MAX_SPELLINGS texts, else None."""
    if op is sre_constants.LITERAL:
        return None if chr(av) in _BREAKS else [chr(av)]
    if op is sre_constants.IN:
        return _set_members(av)
    if op is sre_constants.SUBPATTERN:
        add_flags, del_flags = av[1], av[2]
        if (add_flags | del_flags) & re.IGNORECASE:
            return None
        return _fixed_sequence(av[3], ignore_case)
    if op is sre_constants.BRANCH:
        texts: list[str] = []
        for branch in av[1]:
            spelled = _fixed_sequence(branch, ignore_case)
            if spelled is None:
                return None
            texts.extend(text for text in spelled if text not in texts)
        return texts if len(texts) <= MAX_SPELLINGS else None
    if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT) and av[:2] == (0, 1):
        spelled = _fixed_sequence(av[2], ignore_case)
        return None if spelled is None or len(spelled) >= MAX_SPELLINGS else ["", *spelled]
    return None


def _fixed_sequence(items: Any, ignore_case: bool) -> list[str] | None:
    texts = [""]
    for op, av in items:
        if op in _ZERO_WIDTH:
            continue
        spellings = _spellings(op, av, ignore_case)
        longer = None if spellings is None else _product(texts, spellings)
        if longer is None:
            return None
        texts = longer
    return texts


def _set_members(av: Any) -> list[str] | None:
    """The characters of a character class of plain characters and ranges (`[1-8A-Z]`)."""
    members: list[str] = []
    for op, value in av:
        if op is sre_constants.LITERAL:
            members.append(chr(value))
        elif op is sre_constants.RANGE and value[1] - value[0] < MAX_SPELLINGS:
            members.extend(chr(code) for code in range(value[0], value[1] + 1))
        else:
            return None
    members = list(dict.fromkeys(members))
    if len(members) > MAX_SPELLINGS or _BREAKS.intersection(members):
        return None
    return members


def _product(heads: list[str], tails: list[str]) -> list[str] | None:
    if len(heads) * len(tails) > MAX_SPELLINGS:
        return None
    return list(dict.fromkeys(head + tail for head in heads for tail in tails))


def _item(op: Any, av: Any, ignore_case: bool) -> list[_Alternatives]:
    if op is sre_constants.SUBPATTERN:
        add_flags, del_flags = av[1], av[2]
        scoped = (ignore_case or bool(add_flags & re.IGNORECASE)) and not (del_flags & re.IGNORECASE)
        return _sequence(list(av[3]), scoped)
    if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT) and av[0] >= 1:
        return _sequence(list(av[2]), ignore_case)
    if op is sre_constants.BRANCH:
        branches = [_best(_sequence(list(branch), ignore_case)) for branch in av[1]]
        if all(branches):
            return [tuple(lit for branch in branches if branch for lit in branch)]
    return []
