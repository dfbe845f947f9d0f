"""Find candidate lines fast: one scan of a byte block for every rule's required literals.

Two engines with one contract (identical candidate lines): a pure-Python one built on a single
`re` alternation shaped as a trie, and an optional hyperscan one. Both only select lines; the
rules' full patterns decide.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from ascend_doctor.literals import Literal


def encodings_of(text: str) -> list[bytes]:
    """The byte forms a literal can take in a log: UTF-8, and GB18030 for Chinese text."""
    forms = [text.encode("utf-8")]
    if not text.isascii():
        forms.append(text.encode("gb18030", errors="ignore"))
    return forms


def _trie_regex(words: Sequence[bytes]) -> bytes:
    trie: dict[Any, Any] = {}
    for word in words:
        node = trie
        for byte in word:
            if "" in node:  # a shorter literal already covers this one
                break
            node = node.setdefault(byte, {})
        else:
            node.clear()
            node[""] = True
    return _node_regex(trie)


def _node_regex(node: dict[Any, Any]) -> bytes:
    if "" in node:
        return b""
    branches = [re.escape(bytes([byte])) + _node_regex(child) for byte, child in sorted(node.items())]
    if len(branches) == 1:
        return branches[0]
    return b"(?:" + b"|".join(branches) + b")"


def build_pattern(literals: Sequence[Literal]) -> bytes | None:
    """One bytes regex that finds any of the literals (case-folded where the literal says so)."""
    exact = sorted({form for lit in literals if not lit.ignore_case for form in encodings_of(lit.text)})
    folded = sorted({form for lit in literals if lit.ignore_case for form in encodings_of(lit.text.lower())})
    parts = []
    if exact:
        parts.append(_trie_regex(exact))
    if folded:
        parts.append(b"(?i:" + _trie_regex(folded) + b")")
    return b"|".join(parts) if parts else None


def line_spans(block: bytes, hits: Iterator[int]) -> Iterator[tuple[int, int]]:
    """Distinct (start, end) spans of the lines holding the sorted hit offsets; end excludes \\n."""
    end = -1
    for hit in hits:
        if hit <= end:
            continue
        start = block.rfind(b"\n", 0, hit) + 1
        end = block.find(b"\n", hit)
        if end < 0:
            end = len(block)
        yield start, end


class PythonPrefilter:
    """The pure-Python engine: `re` search, skipping to the next line after each hit."""

    name = "python"

    def __init__(self, literals: Sequence[Literal]) -> None:
        source = build_pattern(literals)
        self._regex = re.compile(source) if source is not None else None

    def spans(self, block: bytes) -> Iterator[tuple[int, int]]:
        if self._regex is None:
            return
        search = self._regex.search
        position = 0
        while True:
            match = search(block, position)
            if match is None:
                return
            hit = match.start()
            start = block.rfind(b"\n", 0, hit) + 1
            end = block.find(b"\n", match.end())
            if end < 0:
                end = len(block)
            yield start, end
            position = end + 1

    def hits(self, block: bytes, start: int, end: int) -> Iterator[int]:
        if self._regex is not None:
            for match in self._regex.finditer(block, start, end):
                yield match.start()


class HyperscanPrefilter:
    """The hyperscan engine: every literal compiled into one database, one scan per block."""

    name = "hyperscan"

    def __init__(self, literals: Sequence[Literal]) -> None:
        import hyperscan

        self._hyperscan = hyperscan
        expressions: list[bytes] = []
        flags: list[int] = []
        for lit in literals:
            text = lit.text.lower() if lit.ignore_case else lit.text
            for form in encodings_of(text):
                expressions.append(re.escape(form))
                flags.append(hyperscan.HS_FLAG_CASELESS if lit.ignore_case else 0)
        self._database = None
        if expressions:
            self._database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            self._database.compile(
                expressions=expressions,
                ids=list(range(len(expressions))),
                elements=len(expressions),
                flags=flags,
            )

    def _ends(self, block: bytes) -> list[int]:
        ends: list[int] = []
        if self._database is None:
            return ends

        def on_match(_id: int, _start: int, end: int, _flags: int, _context: object) -> None:
            ends.append(end - 1)

        self._database.scan(block, match_event_handler=on_match)
        ends.sort()
        return ends

    def spans(self, block: bytes) -> Iterator[tuple[int, int]]:
        yield from line_spans(block, iter(self._ends(block)))

    def hits(self, block: bytes, start: int, end: int) -> Iterator[int]:
        yield from (start + offset for offset in self._ends(block[start:end]))


class EveryLine:
    """Used when some pattern has no literal: every line is a candidate (slow but complete)."""

    name = "every-line"

    def spans(self, block: bytes) -> Iterator[tuple[int, int]]:
        start = 0
        size = len(block)
        while start < size:
            end = block.find(b"\n", start)
            if end < 0:
                end = size
            yield start, end
            start = end + 1

    def hits(self, block: bytes, start: int, end: int) -> Iterator[int]:
        yield from range(start, end, 4096)


def hyperscan_available() -> bool:
    try:
        import hyperscan  # noqa: F401
    except ImportError:
        return False
    return True


def make_prefilter(literals: Sequence[Literal], engine: str, complete: bool) -> Any:
    """The prefilter for `engine` (auto|python|hyperscan); EveryLine if some pattern has no literal."""
    if not complete:
        return EveryLine()
    if engine == "hyperscan" or (engine == "auto" and hyperscan_available()):
        return HyperscanPrefilter(literals)
    return PythonPrefilter(literals)
