"""Export the loaded rule base's own regexes for `rg -f` and `grep -E -f`.

The rules are written for Python's `regex`; the baselines speak Rust regex (rg) and POSIX ERE
(GNU grep). Each pattern is parsed with Python's own regex parser and written out again:

- lookarounds are dropped (neither rg nor grep -E has them): the pattern gets a little wider;
- lazy repeats become greedy (whether a line matches does not change);
- case-insensitive letters become `[aA]`, `\\d \\w \\s` their ASCII classes, `\\b` an ASCII
  word boundary, for both tools alike (grep runs with LC_ALL=C; Unicode `\\b` makes rg's DFA give up
  on any non-ASCII byte and fall back to a backtracker, minutes per 10 MB);
- a pattern the parser or a dialect cannot express (back references, a non-ASCII character
  inside a class, a negated class inside a class) is skipped.

`export()` says how many were translated and skipped.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    try:
        import re._parser as sre_parse  # type: ignore[import-not-found]
        from re import _constants as c  # type: ignore[attr-defined]
    except ImportError:  # Python < 3.11
        import sre_constants as c  # type: ignore[no-redef]
        import sre_parse  # type: ignore[no-redef]

_META = set(".^$*+?{}[]()|\\")
# The largest bounded repeat written for grep (see _Writer.repeat).
ERE_MAX_BOUND = 16
_CATEGORIES = {
    "CATEGORY_DIGIT": ("0-9", False),
    "CATEGORY_NOT_DIGIT": ("0-9", True),
    "CATEGORY_WORD": ("0-9A-Za-z_", False),
    "CATEGORY_NOT_WORD": ("0-9A-Za-z_", True),
    "CATEGORY_SPACE": ("\t\n\x0b\x0c\r ", False),
    "CATEGORY_NOT_SPACE": ("\t\n\x0b\x0c\r ", True),
}


class Untranslatable(Exception):
    """The pattern uses something the target dialect has no form for."""


@dataclass
class Export:
    """Patterns for one dialect, with what had to change."""

    patterns: list[str] = field(default_factory=list)
    total: int = 0
    changed: int = 0
    skipped: list[str] = field(default_factory=list)


class _Writer:
    def __init__(self, dialect: str) -> None:
        self.dialect = dialect
        self.changed = False

    def literal(self, char: str, fold: bool) -> str:
        if fold and char.lower() != char.upper():
            return f"[{char.lower()}{char.upper()}]"
        if char == "\n":
            raise Untranslatable("newline")
        if char in _META:
            return "\\" + char
        if self.dialect == "rust" and not char.isprintable():
            return f"\\x{{{ord(char):x}}}"
        return char

    def bracket(self, items: list[tuple[Any, Any]], fold: bool) -> str:
        if len(items) == 1 and items[0][0] is c.CATEGORY:
            return self.category(items[0][1])
        negate = False
        singles: set[str] = set()
        ranges: list[tuple[str, str]] = []
        for op, av in items:
            if op is c.NEGATE:
                negate = True
            elif op is c.LITERAL:
                singles.update({chr(av).lower(), chr(av).upper()} if fold else {chr(av)})
            elif op is c.RANGE:
                low, high = chr(av[0]), chr(av[1])
                ranges.append((low, high))
                if fold and low.isalpha() and high.isalpha():
                    ranges.append((low.swapcase(), high.swapcase()))
            elif op is c.CATEGORY:
                members, negated = _CATEGORIES[str(av)]
                if negated:
                    raise Untranslatable("negated class inside a class")
                _add_members(members, singles, ranges)
            else:
                raise Untranslatable(str(op))
        return self._class(singles, ranges, negate)

    def _class(self, singles: set[str], ranges: list[tuple[str, str]], negate: bool) -> str:
        singles.discard("\n")
        if not all(ch.isascii() for ch in singles) or not all(a.isascii() and b.isascii() for a, b in ranges):
            raise Untranslatable("non-ASCII character in a class")
        if not singles and not ranges:
            if negate:
                return "."
            raise Untranslatable("empty class")
        hat = "^" if negate else ""
        if self.dialect == "rust":

            def esc(ch: str) -> str:
                return "\\" + ch if ch in "[]\\^&~-" else ch if ch.isprintable() else f"\\x{ord(ch):02x}"

            body = "".join(esc(ch) for ch in sorted(singles))
            body += "".join(f"{esc(a)}-{esc(b)}" for a, b in ranges)
            return f"[{hat}{body}]"
        # POSIX brackets: ']' first, '-' last, '^' not first; a backslash is literal.
        plain = sorted(ch for ch in singles if ch not in "]-^")
        body = ("]" if "]" in singles else "") + "".join(plain)
        body += "".join(f"{a}-{b}" for a, b in ranges)
        if "^" in singles:
            if not body:
                return "[^^]" if negate else "\\^"
            body += "^"
        if "-" in singles:
            body += "-"
        return f"[{hat}{body}]"

    def category(self, av: Any) -> str:
        members, negated = _CATEGORIES[str(av)]
        singles: set[str] = set()
        ranges: list[tuple[str, str]] = []
        _add_members(members, singles, ranges)
        return self._class(singles, ranges, negated)

    def at(self, av: Any) -> str:
        name = str(av)
        if name in ("AT_BEGINNING", "AT_BEGINNING_STRING"):
            return "^"
        if name in ("AT_END", "AT_END_STRING"):
            return "$"
        if name == "AT_BOUNDARY":
            return "(?-u:\\b)" if self.dialect == "rust" else "\\b"
        if name == "AT_NON_BOUNDARY":
            return "(?-u:\\B)" if self.dialect == "rust" else "\\B"
        raise Untranslatable(name)

    def group(self, body: str) -> str:
        return f"(?:{body})" if self.dialect == "rust" else f"({body})"

    def sequence(self, items: Iterable[tuple[Any, Any]], fold: bool) -> str:
        return "".join(self.item(op, av, fold) for op, av in items)

    def item(self, op: Any, av: Any, fold: bool) -> str:
        if op is c.LITERAL:
            return self.literal(chr(av), fold)
        if op is c.NOT_LITERAL:
            return self._class({chr(av).lower(), chr(av).upper()} if fold else {chr(av)}, [], True)
        if op is c.ANY:
            return "."
        if op is c.IN:
            return self.bracket(list(av), fold)
        if op is c.CATEGORY:
            return self.category(av)
        if op is c.AT:
            return self.at(av)
        if op is c.BRANCH:
            return self.group("|".join(self.sequence(branch, fold) for branch in av[1]))
        if op is c.SUBPATTERN:
            add, remove = av[1], av[2]
            scoped = (fold or bool(add & re.IGNORECASE)) and not remove & re.IGNORECASE
            return self.group(self.sequence(av[3], scoped))
        if op in (c.MAX_REPEAT, c.MIN_REPEAT) or str(op) == "POSSESSIVE_REPEAT":
            self.changed |= op is not c.MAX_REPEAT
            return self.repeat(av, fold)
        if op in (c.ASSERT, c.ASSERT_NOT):
            self.changed = True
            return ""
        if str(op) == "ATOMIC_GROUP":
            self.changed = True
            return self.group(self.sequence(av, fold))
        raise Untranslatable(str(op))

    def repeat(self, av: Any, fold: bool) -> str:
        low, high, body = av
        inner = self.sequence(body, fold)
        if not _single(body):
            inner = self.group(inner)
        if high == c.MAXREPEAT:
            suffix = {0: "*", 1: "+"}.get(low, f"{{{low},}}")
        elif (low, high) == (0, 1):
            suffix = "?"
        elif low == high:
            suffix = f"{{{low}}}"
        elif self.dialect == "ere" and high > ERE_MAX_BOUND:
            # GNU grep builds one DFA of all the patterns: a few dozen `.{0,200}` in it and the
            # DFA gives up (100 MB took 60 s, not 1 s). Unbounded, the pattern only widens.
            suffix = {0: "*", 1: "+"}.get(low, f"{{{low},}}")
            self.changed = True
        else:
            suffix = f"{{{low},{high}}}"
        return inner + suffix


def _add_members(members: str, singles: set[str], ranges: list[tuple[str, str]]) -> None:
    index = 0
    while index < len(members):
        if index + 2 < len(members) and members[index + 1] == "-":
            ranges.append((members[index], members[index + 2]))
            index += 3
        else:
            singles.add(members[index])
            index += 1


def _single(body: Any) -> bool:
    items = list(body)
    return len(items) == 1 and items[0][0] in (c.LITERAL, c.NOT_LITERAL, c.ANY, c.IN, c.CATEGORY)


def translate(pattern: str, dialect: str) -> tuple[str, bool]:
    """(pattern in `dialect`, whether its meaning had to change); raises Untranslatable."""
    try:
        parsed = sre_parse.parse(pattern)
    except Exception as exc:  # `regex`-only syntax
        raise Untranslatable(f"parse: {exc}") from None
    writer = _Writer(dialect)
    fold = bool(parsed.state.flags & re.IGNORECASE)
    text = writer.sequence(list(parsed), fold)
    changed = writer.changed or text == ""
    if text == "":
        raise Untranslatable("empty after translation")
    return text, changed


def export(patterns: Iterable[str], dialect: str) -> Export:
    """Translate every pattern; `dialect` is `rust` (rg) or `ere` (grep -E)."""
    result = Export()
    for pattern in patterns:
        result.total += 1
        try:
            text, changed = translate(pattern, dialect)
        except Untranslatable as exc:
            result.skipped.append(f"{pattern}  ({exc})")
            continue
        result.changed += changed
        result.patterns.append(text)
    return result


def rule_patterns(rules: Iterable[Any]) -> list[str]:
    """Every pattern of the loaded rules, in rule order."""
    return [pattern for rule in rules for pattern in rule.patterns]
