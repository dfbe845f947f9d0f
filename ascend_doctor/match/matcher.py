"""Rules compiled for matching: literal index, prefilter, and the full patterns with a time limit.

A pattern runs on a clean segment only when one of its prefilter literals is in it (the literal
index). Every other literal set a match needs (`literal_sets`) only skips work: a line whose
window holds none of a set cannot match (`worth`), and a joined string without one is not
searched. Neither changes what is found.
"""

from __future__ import annotations

import os
import sys
from bisect import bisect_left
from collections.abc import Sequence
from functools import cache
from typing import Any, NamedTuple

from ascend_doctor import regexes
from ascend_doctor.cache import read_cache, write_cache
from ascend_doctor.match import literals, prefilter
from ascend_doctor.match.literals import Literal, literal_sets
from ascend_doctor.match.pattern_search import RulePattern
from ascend_doctor.match.prefilter import WEIRD_TEXT, EveryLine, encodings_of, engine_name, make_prefilter
from ascend_doctor.model import Rule

PATTERN_TIMEOUT = 0.25
MAX_TIMEOUTS = 5  # a pattern that runs out of time this often is not tried again in this run
INDEX_VERSION = 15  # 15: the compiled code of a regex keeps its named groups
# The first bytes a matcher scans are checked line by line (every literal on every line): for a
# small log that is cheaper than compiling or loading the prefilter. Findings are the same.
SMALL_INPUT = 16 * 1024
# Off, every line is a candidate and every literal and pattern is tried on it, with `regex` alone:
# the plain path the equivalence tests compare every speed-up against.
FAST = True
_ASCII_SPACE = b" \t\r\x0b\x0c\x1c\x1d\x1e\x1f"
# The characters whose lower case is ASCII: a case-insensitive literal can be in a segment's
# lowered text and not in its bytes.
_FOLDS_TO_ASCII = ("\u0130", "\u212a")


class PatternRef(NamedTuple):
    rule_index: int
    pattern_index: int


class Hit(NamedTuple):
    """A rule that matched one segment: which pattern, what it captured, the part of the segment
    it matched (start, end), and whether the match ran on into the next line (1) or began in the
    previous one (-1): a message hard-wrapped there."""

    rule_index: int
    pattern_index: int
    captures: tuple[tuple[str, str], ...]
    span: tuple[int, int]
    wrap: int = 0


class LiteralIndex(NamedTuple):
    """What every run derives from the patterns; pickled in the rule cache."""

    literals: tuple[Literal, ...]
    refs: tuple[tuple[PatternRef, ...], ...]
    unfiltered: tuple[PatternRef, ...]
    needs: dict[PatternRef, tuple[tuple[Literal, ...], ...]]


def build_index(rules: Sequence[Rule]) -> LiteralIndex:
    """Literal index of the rules: prefilter literals by key, and the other sets each pattern needs."""
    by_literal: dict[tuple[str, bool], list[PatternRef]] = {}
    literals: list[Literal] = []
    unfiltered: list[PatternRef] = []
    needs: dict[PatternRef, tuple[tuple[Literal, ...], ...]] = {}
    for rule_index, rule in enumerate(rules):
        for pattern_index, pattern in enumerate(rule.patterns):
            ref = PatternRef(rule_index, pattern_index)
            found, others = literal_sets(pattern)
            if not found:
                unfiltered.append(ref)
                continue
            needs[ref] = others
            for literal in found:
                key = (literal.text.lower() if literal.ignore_case else literal.text, literal.ignore_case)
                if key not in by_literal:
                    literals.append(literal)
                    by_literal[key] = []
                by_literal[key].append(ref)
    refs = tuple(tuple(refs) for refs in by_literal.values())
    return LiteralIndex(tuple(literals), refs, tuple(unfiltered), needs)


def build_gates(index: LiteralIndex) -> tuple[tuple[tuple[_Set, ...], ...] | None, ...]:
    """Per literal, the byte checks `Matcher.worth` makes on the lines the prefilter selects."""
    return tuple(_gate(key_refs, index.needs) for key_refs in index.refs)


def _gate(refs: Sequence[PatternRef], needs: dict[PatternRef, Any]) -> Any:
    """Per pattern of one literal, a `_Set` for each other literal set it needs; None if one
    needs nothing more (then every line holding the literal is worth matching)."""
    checks = []
    for ref in refs:
        sets = []
        for alternatives in needs[ref]:
            exact: list[bytes] = []
            folded: list[bytes] = []
            for literal in alternatives:
                core = literal.text.strip(" ")  # a join may add or drop the space at its edge
                for data in encodings_of(core.lower() if literal.ignore_case else core):
                    (folded if literal.ignore_case else exact).append(
                        data.lower() if literal.ignore_case else data
                    )
            if all(exact) and all(folded):  # an all-space literal is always there
                sets.append(_Set(tuple(exact), tuple(folded), _heads(exact), _heads(folded)))
        if not sets:
            return None
        checks.append(tuple(sets))
    return tuple(checks)


class _Set(NamedTuple):
    """One literal set a pattern needs, as bytes: whole forms, and the ways each can be split
    across a line end, by the last byte of the head (head, rest)."""

    exact: tuple[bytes, ...]
    folded: tuple[bytes, ...]
    exact_heads: dict[int, tuple[tuple[bytes, bytes], ...]]
    folded_heads: dict[int, tuple[tuple[bytes, bytes], ...]]


def _heads(forms: Sequence[bytes]) -> dict[int, tuple[tuple[bytes, bytes], ...]]:
    heads: dict[int, list[tuple[bytes, bytes]]] = {}
    for data in forms:
        for length in range(1, len(data)):
            rest = data[length:]
            heads.setdefault(data[length - 1], []).append((data[:length], rest))
            if rest[:1] == b" ":  # joined with a space: the space may be the one the join adds
                heads[data[length - 1]].append((data[:length], rest[1:]))
    return {byte: tuple(pairs) for byte, pairs in heads.items()}


def _cache_key(rules: Sequence[Rule]) -> str:
    """The patterns, and the code that turns them into an index (edited code is a new index)."""
    text = "\x00".join("\x01".join(rule.patterns) for rule in rules)
    code = []
    for module in (literals, prefilter, regexes, sys.modules[__name__]):
        stat = os.stat(module.__file__ or "")
        code.append(f"{stat.st_mtime_ns}:{stat.st_size}")
    return f"{INDEX_VERSION}\x02{regexes.CODE_FORMAT}\x02{code}\x02{text}"


class Matcher:
    """Matches clean text segments against the rules, trying only rules whose literal is present."""

    def __init__(self, rules: Sequence[Rule], engine: str = "auto", use_cache: bool = True) -> None:
        self.rules = tuple(rules)
        self._engine = engine  # resolved with the prefilter: a small log never imports hyperscan
        self._cache_key = _cache_key(self.rules) if use_cache else None
        index = read_cache("matcher", self._cache_key) if self._cache_key else None
        if not isinstance(index, LiteralIndex):
            index = build_index(self.rules)
            if self._cache_key:
                write_cache("matcher", self._cache_key, index)
        self._index = index
        self._prefilter: Any = None
        self._gates: tuple[tuple[tuple[_Set, ...], ...] | None, ...] = ()
        self._checked = 0
        self.unfiltered = list(index.unfiltered)
        self._compiled: dict[PatternRef, RulePattern] = {}
        self._every = tuple(range(len(index.literals)))
        self.timeouts: dict[str, int] = {}  # rule id -> lines on which one of its patterns ran out of time
        self._expired: dict[PatternRef, int] = {}
        self.line_keys: frozenset[int] | None = None  # set by the scanner for the current line
        self._probe = _NO_BLOCK

    @property
    def prefilter(self) -> Any:
        """The engine's prefilter and the gates of its lines, compiled (or loaded from their own
        cache, which a small log never reads) on first use."""
        if self._prefilter is None:
            key = self._cache_key
            cached = read_cache("prefilter", key) if key else None
            cached = cached if isinstance(cached, dict) else {}
            engine = engine_name(self._engine)
            prefilter = make_prefilter(self._index.literals, engine, not self.unfiltered, cached.get(engine))
            stale = False
            if engine not in cached:  # what rebuilds it: a hyperscan database, a regex and its pieces
                serialize = getattr(prefilter, "serialize", None)
                cached[engine] = serialize() if serialize else None
                stale = True
            if not isinstance(cached.get("gates"), tuple):
                cached["gates"] = build_gates(self._index)
                stale = True
            if key and stale:
                write_cache("prefilter", key, cached)
            self._gates = cached["gates"]
            self._prefilter = prefilter
        return self._prefilter

    def prefilter_for(self, block: Any) -> Any:
        """EveryLine for the first SMALL_INPUT bytes (same findings), else the engine's prefilter."""
        if not FAST:
            return _EVERY_LINE
        if self._prefilter is None and self._checked + len(block) <= SMALL_INPUT:
            self._checked += len(block)
            return _EVERY_LINE
        return self.prefilter

    def worth(self, block: bytes, bounds: tuple[int, int, int, int], keys: frozenset[int] | None) -> bool:
        """False only when no pattern of the line's literals can match the line or its joins with
        its neighbours: some other literal set the pattern needs is in none of the three lines.
        `bounds` are (previous line start, line start, line end, next line end) in `block`."""
        if keys is None or not FAST:
            return True
        pending = []
        for key in keys:
            checks = self._gates[key]
            if checks is None:
                return True
            pending.append(checks)
        probe = self._probe if self._probe.block is block else _Probe(block)
        self._probe = probe
        if probe.unsure(*bounds):
            return True
        return any(all(probe.present(need, bounds) for need in sets) for each in pending for sets in each)

    def block_done(self) -> None:
        """Forget the block the scanner has finished. Holding it until the next block was made
        kept two ~1 MiB blocks alive at once, and glibc then gave each new block fresh pages:
        page faults were 10% of a big scan."""
        self.line_keys = None
        self._probe = _NO_BLOCK

    def _pattern(self, ref: PatternRef) -> RulePattern:
        compiled = self._compiled.get(ref)
        if compiled is None:
            compiled = RulePattern(self.rules[ref.rule_index].patterns[ref.pattern_index])
            self._compiled[ref] = compiled
        return compiled

    def candidates(self, text: str, keys: frozenset[int] | None = None) -> list[PatternRef]:
        """Patterns worth running on `text`: those whose literal it contains, in rule order.
        `keys` narrows the literals looked for to those the line's bytes hold."""
        lowered: str | None = None
        found: list[int] = []
        literals = self._index.literals
        for key in self._every if keys is None else keys:
            literal = literals[key]
            if literal.ignore_case:
                if lowered is None:
                    lowered = text.lower()
                if literal.text.lower() in lowered:
                    found.append(key)
            elif literal.text in text:
                found.append(key)
        if not found:
            return list(self.unfiltered)
        refs: set[PatternRef] = set(self.unfiltered)
        for key in found:
            refs.update(self._index.refs[key])
        return sorted(refs)  # PatternRef is (rule_index, pattern_index): rule order

    def _keys_in(self, text: str) -> frozenset[int] | None:
        """The literals in a clean segment, found by the prefilter (None when it cannot tell, or
        is not built: a small log is checked line by line rather than pay for building it)."""
        if self._prefilter is None or isinstance(self._prefilter, EveryLine):
            return None
        if any(mark in text for mark in _FOLDS_TO_ASCII):
            return None
        data = text.encode("utf-8", "surrogatepass")
        keys = {key for _begin, key in self._prefilter.hits(data, 0, len(data))}
        keys.discard(prefilter.WEIRD)  # a `{` in clean text is only text: it is not expanded again
        return frozenset(keys)

    def search(self, ref: PatternRef, texts: Sequence[tuple[str, int, int]]) -> tuple[Any, int] | None:
        """The pattern's match in the first of `texts` (one line, alone and joined with neighbours,
        with the span the line itself has in each) that takes in part of the line, and where the
        line starts in the text searched. A match wholly
        inside a neighbour is the neighbour's evidence, not this line's. Each search runs under a
        time limit. A time-out gives up on the line, counted once; after
        MAX_TIMEOUTS lines the pattern is dropped, so a backtracking pattern cannot stall a run.
        A text without one of the other literal sets the pattern needs is not searched."""
        if self._expired.get(ref, 0) >= MAX_TIMEOUTS:
            return None
        compiled = None
        for text, low, high in texts:
            if FAST and not self._may_match(ref, text):
                continue
            if compiled is None:
                compiled = self._pattern(ref)
            try:
                found = compiled.search(text, PATTERN_TIMEOUT, try_re=FAST)
            except TimeoutError:
                self._expired[ref] = self._expired.get(ref, 0) + 1
                rule_id = self.rules[ref.rule_index].id
                self.timeouts[rule_id] = self.timeouts.get(rule_id, 0) + 1
                return None
            if found is not None and found.start() < high and found.end() > low:
                return found, low
        return None

    def _may_match(self, ref: PatternRef, text: str) -> bool:
        lowered: str | None = None
        for alternatives in self._index.needs.get(ref, ()):
            for literal in alternatives:
                if literal.ignore_case:
                    if lowered is None:
                        lowered = text.casefold()
                    if literal.text.casefold() in lowered:
                        break
                elif literal.text in text:
                    break
            else:
                return False
        return True

    def match(self, text: str, before: str = "", after: str = "") -> list[Hit]:
        """Every rule matching `text`, or `text` joined with a neighbour line (a message
        hard-wrapped across lines), once each."""
        keys = self.line_keys
        if keys is None and FAST:
            # The scanner knows no literals for a segment whose bytes held a WEIRD marker: the
            # prefilter finds them in its clean text (13-56 us a line against 600 for a test of
            # every literal; a line with a `{` is common).
            keys = self._keys_in(text)
        refs = self.candidates(text, keys if FAST else None)
        if not refs:
            return []
        hits: list[Hit] = []
        done: set[int] = set()
        own = len(text)
        joined = [(text, 0, own)]
        if after:
            joined += [(text + after, 0, own), (f"{text} {after}", 0, own)]
        if before:
            start = len(before)
            joined += [(before + text, start, start + own), (f"{before} {text}", start + 1, start + 1 + own)]
        for ref in refs:
            if ref.rule_index in done:
                continue
            searched = self.search(ref, joined)
            if searched is not None:
                found, low = searched
                done.add(ref.rule_index)
                captures = tuple((k, v) for k, v in found.groupdict().items() if v is not None)
                span = (max(found.start() - low, 0), min(found.end() - low, own))
                wrap = 1 if found.end() - low > own else -1 if found.start() < low else 0
                hits.append(Hit(ref.rule_index, ref.pattern_index, captures, span, wrap))
        return hits


_EVERY_LINE = EveryLine()


@cache
def _markers() -> tuple[bytes, ...]:
    """The bytes of the odd characters (WEIRD_TEXT, `ſ`) in UTF-8 and GB18030, encoded on first
    use: importing the GB18030 codec costs every run a millisecond otherwise."""
    return tuple({text.encode(codec) for text in (*WEIRD_TEXT, "\u017f") for codec in ("utf-8", "gb18030")})


_SPACE = frozenset(_ASCII_SPACE)


def _positions(block: bytes, marks: Sequence[bytes]) -> list[int]:
    """Where the marks are, the first of each line that has one (the rest do not change a check)."""
    found = []
    for mark in marks:
        at = block.find(mark)
        while at >= 0:
            found.append(at)
            line_end = block.find(b"\n", at)
            at = block.find(mark, line_end) if line_end >= 0 else -1
    return sorted(found)


class _Probe:
    """One block, looked into around candidate lines for the other literal sets they need."""

    def __init__(self, block: bytes) -> None:
        self.block = block
        self._lowered: tuple[tuple[int, int], bytes] | None = None
        # Bytes after which clean text may hold a literal the bytes do not (prefilter.WEIRD_TEXT;
        # `ſ` folds to `s` in a case-insensitive pattern), or a `\r` part that moves a line's end.
        self.odd = _positions(block, (b"\r", b"{", b"\x1b"))
        self.wide = not block.isascii()

    def lowered(self, first: int, last: int) -> bytes:
        """block[first:last] in ASCII lower case (cached for the line being looked at)."""
        if self._lowered is None or self._lowered[0] != (first, last):
            self._lowered = ((first, last), self.block[first:last].lower())
        return self._lowered[1]

    def unsure(self, first: int, start: int, end: int, last: int) -> bool:
        """True when the bytes cannot tell: an odd byte in the three lines, or a line that ends in
        non-ASCII bytes, which may be Unicode white space that `strip()` removes."""
        odd = self.odd
        if odd:
            index = bisect_left(odd, first)
            if index < len(odd) and odd[index] < last:
                return True
        block = self.block
        if self.wide and not block[first:last].isascii():
            if any(block.find(mark, first, last) >= 0 for mark in _markers()):
                return True
            for stop, low in ((start - 1, first), (end, start)):
                while stop > low and block[stop - 1] in _SPACE:
                    stop -= 1
                if stop > low and block[stop - 1] >= 0x80:
                    return True
        return False

    def present(self, need: _Set, bounds: tuple[int, int, int, int]) -> bool:
        """Whether one of the set's forms can be in a join of the three lines: in one of them,
        or split across a line end (its head ends one line, the rest is in the next)."""
        block = self.block
        first, start, end, last = bounds
        for data in need.exact:
            if block.find(data, first, last) >= 0:
                return True
        # The lowered copy holds only the three lines: index it `first` bytes lower.
        lowered = self.lowered(first, last) if need.folded else b""
        for data in need.folded:
            if lowered.find(data) >= 0:
                return True
        for low, stop, following, limit in ((first, start - 1, start, end), (start, end, end + 1, last)):
            while stop > low and block[stop - 1] in _SPACE:
                stop -= 1
            if stop <= low or following >= limit:
                continue
            for hay, shift, heads in ((block, 0, need.exact_heads), (lowered, first, need.folded_heads)):
                if not heads:
                    continue
                for head, rest in heads.get(hay[stop - 1 - shift], ()):
                    begin = stop - len(head) - shift
                    if (
                        begin >= low - shift
                        and hay.startswith(head, begin)
                        and hay.find(rest, following - shift, limit - shift) >= 0
                    ):
                        return True
        return False


_NO_BLOCK = _Probe(b"")
