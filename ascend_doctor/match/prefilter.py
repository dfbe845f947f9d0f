"""Find candidate lines fast: one scan of a byte block for every rule's required literals.

Two engines with one contract: `spans(block)` yields every line that holds one of the literals'
byte forms, with the literals it holds (`keys`), or None for a line whose bytes can hide a literal
from a byte search (see WEIRD) — the matcher then finds them in the line's clean text. The
pure-Python engine runs `re` tries (one per first byte) over each block's lines made unique once
their hex digits are blurred, plus `bytes.find` for the few forms that start with common bytes and
for the one-byte markers (rare first bytes are walked with memchr before a full pass); the
hyperscan one compiles every form into one database. Both only select lines; the rules' full
patterns decide, so findings do not depend on the engine.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import Any, Optional

from ascend_doctor.errors import ConfigError
from ascend_doctor.match.fast_engine import hyperscan_missing
from ascend_doctor.match.literals import Literal
from ascend_doctor.regexes import MaybeCode, compile_with_code, rebuild

# Bytes after which the clean text of a line may hold a literal that its raw bytes do not: ESC
# (a partly stripped colour code), a BOM (removed from the middle of a line), `{` (a JSON record
# is expanded and unescaped) and the two characters whose lower case is ASCII (İ, the Kelvin K).
WEIRD_TEXT = ("\x1b", "\ufeff", "{", "\u0130", "\u212a")
WEIRD = -1
# A literal is searched by its piece that starts at its rarest byte (at least this long), so that
# `re` enters its trie at few positions. Costs: per-mille byte frequencies measured on generated
# training logs (shared/bench/gen_logs.py) and the fixtures; unlisted bytes count 1. Shorter
# pieces leave more room for a rare first byte: the bench log's candidate scan took 2.42 s per
# 100 MB with four bytes, 2.08 with three and 1.93 with two (best of 6 interleaved rounds). Two
# made the bench's one-line file (`abc def 0.1234, ` repeated) 1.4x slower, as 4 of its 16 bytes
# then start a piece; three is never the slowest of the three.
SUBKEY_MIN = 3
# One `bytes.find` pass costs about what `re` entering its trie at 3 per mille of the positions
# does (measured on the bench log: 2 and 5 were slower).
ANCHOR_COST = 3
_COMMON = {
    **dict.fromkeys(b" ", 131),
    **dict(
        zip(
            b"e214:at-insr.3o8p56l9,c7md=[]guhk|/NFIOby_BEf()GUvz",
            (
                42,
                41,
                34,
                33,
                30,
                30,
                29,
                28,
                27,
                27,
                27,
                26,
                24,
                23,
                23,
                22,
                21,
                20,
                19,
                19,
                18,
                17,
                17,
                15,
                14,
                13,
                11,
                10,
                10,
                10,
                10,
                8,
                8,
                8,
                7,
                7,
                6,
                6,
                6,
                5,
                5,
                4,
                3,
                3,
                3,
                2,
                2,
                2,
                2,
                2,
                2,
            ),
        )
    ),
    # The blurred text reads every hex digit as 0: 480 per mille of a plog's bytes once blurred,
    # 410 of a training log's. No piece starts there while another byte will do.
    ord("0"): 400,
}


def encodings_of(text: str) -> list[bytes]:
    """The byte forms a literal can take in a log: UTF-8, and GB18030 for Chinese text."""
    forms = [text.encode("utf-8")]
    if not text.isascii():
        forms.append(text.encode("gb18030", errors="ignore"))
    return forms


def literal_forms(literals: Sequence[Literal]) -> list[tuple[bytes, bool, int]]:
    """(bytes, case-folded, key) for every byte form of every literal; key is the literal's index
    (WEIRD for the markers). Folded forms are ASCII-lowered, as `(?i)` on bytes compares."""
    forms: list[tuple[bytes, bool, int]] = []
    for key, literal in enumerate(literals):
        text = literal.text.lower() if literal.ignore_case else literal.text
        for data in encodings_of(text):
            if data and b"\n" not in data:
                forms.append((data.lower() if literal.ignore_case else data, literal.ignore_case, key))
    for marker in WEIRD_TEXT:
        for data in {marker.encode("utf-8"), marker.encode("gb18030")}:
            forms.append((data, False, WEIRD))
    return forms


def _cases(byte: int, folded: bool) -> set[int]:
    """The byte and, when `folded` and it is an ASCII letter, its other case (what `(?i)` on bytes
    folds)."""
    return {byte | 32, byte & ~32} if folded and chr(byte).isascii() and chr(byte).isalpha() else {byte}


def _cost(byte: int, folded: bool) -> int:
    return sum(_COMMON.get(each, 1) for each in _cases(byte, folded))


Offsets = dict[tuple[bytes, bool], int]
Starts = dict[tuple[bytes, bool], list[tuple[int, int, set[int]]]]  # (own cost, offset, first bytes)
# (first byte, regex source, its compiled code) of each regex, and the pieces
GroupState = tuple[list[tuple[int, bytes, MaybeCode]], Offsets]
PythonState = tuple[GroupState, Optional[GroupState]]  # the forms looked for as they are, and blurred


def piece_offsets(forms: Sequence[tuple[bytes, bool, int]]) -> Offsets:
    """Where each form's searched piece starts, leaving it SUBKEY_MIN bytes. `re` enters its trie
    wherever the first byte of any piece appears, so what costs is the set of those first bytes,
    not each form's own: the forms with the fewest rare bytes choose first, and each takes the
    offset whose first byte adds least to the bytes already chosen (a byte another piece starts
    with is free), then its rarest. Against taking every form's own rarest byte, the chosen bytes'
    frequency (by _COMMON) fell from 251 to 167 per mille, and the share of the bench log's
    positions where `re` enters the trie from 19% to 15%. Then a common byte is given up where a
    few exact forms chose it and no other (see `_give_up`)."""
    choices = []
    for data, folded, _key in forms:
        last = max(0, len(data) - SUBKEY_MIN)
        # (own cost, offset, the byte values a piece starting there begins with)
        starts = [
            (_cost(data[index], folded), index, _cases(data[index], folded)) for index in range(last + 1)
        ]
        choices.append((-min(starts)[0], data, folded, starts))
    choices.sort(key=lambda choice: choice[0])
    chosen: set[int] = set()
    offsets: Offsets = {}
    starts_of: Starts = {}
    for _rarest, data, folded, starts in choices:
        if (data, folded) in offsets:
            continue
        _added, _own, index, first = min(
            (sum(_COMMON.get(byte, 1) for byte in first - chosen), own, index, first)
            for own, index, first in starts
        )
        chosen |= first
        offsets[data, folded] = index
        starts_of[data, folded] = starts
    for byte in sorted(chosen, key=lambda byte: (-_COMMON.get(byte, 1), byte)):
        _give_up(byte, chosen, offsets, starts_of)
    return offsets


def _give_up(byte: int, chosen: set[int], offsets: Offsets, starts_of: Starts) -> None:
    """Stop `re` entering its trie at `byte` when that is dearer than a `bytes.find` (ANCHOR_COST
    per mille) for each exact form that has no other chosen byte to start at; the others move to
    one. A single code (`100024`) made every `1` of a log an entry: the bench log's entries fell
    from 196 to 162 per mille of its positions, and its candidate scan took 1.59 s instead of 1.81
    (40 MB, best of 5 interleaved rounds), with the same lines."""
    rest = chosen - {byte}
    moves: Offsets = {}
    stay: set[bytes] = set()
    for (data, folded), index in offsets.items():
        if byte not in _cases(data[index], folded):
            continue
        free = [(own, at) for own, at, first in starts_of[data, folded] if first <= rest]
        if free:
            moves[data, folded] = min(free)[1]
        elif folded:
            return
        else:
            stay.add(data)
    if ANCHOR_COST * len(stay) < _COMMON.get(byte, 1):
        offsets.update(moves)
        chosen.discard(byte)


def _trie(words: Sequence[tuple[bytes, bytes]]) -> dict[Any, Any]:
    """A trie of (rest of the piece, whole form): each word's node keeps the forms it ends."""
    root: dict[Any, Any] = {}
    for word, form in words:
        node = root
        for byte in word:
            node = node.setdefault(byte, {})
        node.setdefault("", set()).add(form)
    return root


def _node_regex(node: dict[Any, Any]) -> bytes:
    """Where a piece ends, a lookbehind for each whole form that ends there: the regex reports a
    form, not every place its piece (`memory` of ` allocate memory`) happens to be. A form whose
    piece is all of it (marked b"") has then been matched whole: that node matches at once, and
    `_Finder` lists every form at the position, longer ones included."""
    ends = node.get("", set())
    branches = [b""] if b"" in ends else [b"(?<=" + re.escape(form) + b")" for form in sorted(ends)]
    branches += [re.escape(bytes([byte])) + _node_regex(node[byte]) for byte in sorted(set(node) - {""})]
    if len(branches) == 1:
        return branches[0]
    return b"(?:" + b"|".join(branches) + b")"


def build_patterns(forms: Sequence[tuple[bytes, bool, int]], offsets: Offsets) -> list[tuple[int, bytes]]:
    """(first byte, bytes regex) finding every form by its searched piece, a regex per byte a
    piece starts with. Each starts with that plain byte, which `re` finds
    at ~1.6 GB/s; an alternation of them all would be skipped to at ~165 MB/s, and each of its
    entries costs ~1.7 times as much (see docs/performance.md)."""
    exact: dict[int, list[tuple[bytes, bytes]]] = {}
    folded: dict[int, list[tuple[bytes, bytes]]] = {}
    for data, fold, _key in forms:
        piece = data[offsets[data, fold] :]
        for first in _cases(piece[0], fold):
            (folded if fold else exact).setdefault(first, []).append(
                (piece[1:], data if offsets[data, fold] else b"")
            )
    regexes = []
    for first in sorted(set(exact) | set(folded), key=lambda byte: (-_COMMON.get(byte, 1), byte)):
        parts = []
        if first in exact:
            parts.append(_node_regex(_trie(exact[first])))
        if first in folded:
            parts.append(b"(?i:" + _node_regex(_trie(folded[first])) + b")")
        body = parts[0] if len(parts) == 1 else b"(?:" + b"|".join(parts) + b")"
        rests = [rest for rest, _form in exact.get(first, [])]
        folded_rests = [rest for rest, _form in folded.get(first, [])]
        regexes.append((first, re.escape(bytes([first])) + _next_bytes(rests, folded_rests) + body))
    return regexes


def _next_bytes(exact: Sequence[bytes], folded: Sequence[bytes]) -> bytes:
    """A lookahead for the bytes that can follow a trie's first byte (the next two, where every
    piece has them). At each place of its first byte `re` enters the trie, and there tries the
    branches one by one: a class rejects a place at once. The plog tree's `E` (in `GE(`, `DEBUG`,
    `TEFUSION`) never starts a code (`E[0-9A-Z][0-9]`); the lookahead took the regex from 1.65 to
    1.04 ms per MB, where a pass that matches nothing takes 0.69."""
    rests = [(rest, False) for rest in exact] + [(rest, True) for rest in folded]
    depth = min(min(len(rest) for rest, _fold in rests), 2)
    classes: list[bytes] = []
    for at in range(depth):
        allowed: set[int] = set()
        for rest, fold in rests:
            allowed |= _cases(rest[at], fold)
        if len(allowed) == 1 and not classes:
            return b""  # the trie goes on with one byte: `re` reads it as part of its prefix
        classes.append(b"[" + b"".join(re.escape(bytes([byte])) for byte in sorted(allowed)) + b"]")
    return b"(?=" + b"".join(classes) + b")" if classes else b""


class _Finder:
    """Every form at a given position, by the first three bytes of its searched piece. Forms
    are (searched bytes, folded, key, bytes in the log): the searched bytes are read in the text
    the regex scanned, which may be blurred; `_Group` checks the bytes in the log."""

    def __init__(self, forms: Sequence[tuple[bytes, bool, int, bytes]], offsets: Offsets) -> None:
        self.exact: dict[bytes, list[tuple[bytes, bytes, int, int]]] = {}
        self.folded: dict[bytes, list[tuple[bytes, bytes, int, int]]] = {}
        for searched, fold, key, data in forms:
            offset = offsets[searched, fold]
            table = self.folded if fold else self.exact
            table.setdefault(searched[offset : offset + 3], []).append((searched, data, offset, key))
        # Pieces shorter than three bytes (`İ` in UTF-8) are looked up by their length.
        heads = {len(head) for table in (self.exact, self.folded) for head in table}
        self.lengths = sorted(heads, reverse=True)

    def at(self, scanned: Any, hit: int, start: int, end: int) -> Iterator[tuple[int, bytes, bool, int]]:
        """(begin, data, folded, key) of every form inside [start, end) whose searched
        bytes are in `scanned` with its piece at `hit`. A word as `module` or `support` starts
        the pieces of dozens of forms: each is checked here, in one loop, not handed on."""
        for length in self.lengths:
            head = bytes(scanned[hit : hit + length])
            for searched, data, offset, key in self.exact.get(head, ()):
                begin = hit - offset
                if begin >= start and begin + len(data) <= end and scanned.startswith(searched, begin):
                    yield begin, data, False, key
            for searched, data, offset, key in self.folded.get(head.lower(), ()):
                begin = hit - offset
                if begin >= start and begin + len(data) <= end and _holds(scanned, begin, searched, True):
                    yield begin, data, True, key


def _holds(text: Any, at: int, data: bytes, folded: bool) -> bool:
    """Whether `data` is in `text` at `at` (ASCII case-folded: `data` is lowered)."""
    return bytes(text[at : at + len(data)]).lower() == data if folded else text.startswith(data, at)


def _occurrences(block: Any, data: bytes, start: int = 0, end: int | None = None) -> Iterator[int]:
    """Every offset in [start, end) where `data` begins and ends, by `bytes.find`."""
    at = block.find(data, start, end)
    while at >= 0:
        yield at
        at = block.find(data, at + 1, end)


def line_keys(keys: set[int]) -> frozenset[int] | None:
    return None if WEIRD in keys else frozenset(keys)


def anchored_forms(forms: Sequence[tuple[bytes, bool, int]], offsets: Offsets) -> set[bytes]:
    """Exact forms found with `bytes.find` rather than by the regex: those whose piece starts
    with a byte so common that `re` would enter its trie there more often than one `find` per
    form costs (ANCHOR_COST per mille of the positions per form), and the one-byte ones (the
    ESC and `{` markers), which `find` looks for with memchr."""
    groups: dict[int, list[tuple[bytes, bool]]] = {}
    for data, fold, _key in forms:
        first = data[offsets[data, fold]]
        for each in _cases(first, fold):
            groups.setdefault(each, []).append((data, fold))
    anchored: set[bytes] = set()
    for first, members in groups.items():
        datas = {data for data, _fold in members}
        if not any(fold for _data, fold in members) and _COMMON.get(first, 1) > ANCHOR_COST * len(datas):
            anchored |= datas
    return anchored | {data for data, fold, _key in forms if len(data) == 1 and not fold}


# Hex digits read as 0 ("blurred"), a-f in both cases so that a case-folded form is found as
# before: lines that differ only in their numbers (a training step's loss, a plog's time and pid)
# or in their hex (a plog's pointers, stream addresses and cache keys) are scanned once. Of 100
# MB of the bench's plog tree, 5% of the bytes are in lines whose blurred text is new to the run,
# against 30% with digits alone blurred; the training log, 8% either way. A blurred form loses
# its a-f, so its piece starts at another byte; the words of a line blur alike, so it repeats.
_BLUR = bytes.maketrans(b"123456789abcdefABCDEF", b"0" * 21)
_BLURRED_BYTES = frozenset(b"0123456789abcdefABCDEF")
# A form with fewer bytes than this that are not blurred is looked for as it is, in every line:
# blurred, a code as `507011` or `EE9999` would be in every line that holds a six-digit number.
BLURRED_MIN = 2


def _blurrable(data: bytes) -> bool:
    return sum(byte not in _BLURRED_BYTES for byte in data) >= BLURRED_MIN


# A regex pass costs ~0.65 ms per MB, a `find` of a few bytes ~1, even where they never occur;
# memchr, ~0.06. So the places of a byte not known to be common (_COMMON does not list it) are
# walked with memchr and checked each, up to this many; past them the byte is common in these
# logs after all: the regex or `find` takes the rest, and the next texts too.
WALK_HITS = 64


def _walk(
    scanned: Any,
    byte: bytes,
    holds: Callable[[int], bool],
    rest: Callable[[int], Iterator[int]],
    common: set[int],
) -> Iterator[int]:
    """The places of `byte` in `scanned` where `holds`, up to WALK_HITS of them, then what `rest`
    finds from the next one on; a byte with more places than that joins `common`, whose bytes
    are not walked: `rest` finds all."""
    if byte[0] in common:
        yield from rest(0)
        return
    at = scanned.find(byte)
    for _hit in range(WALK_HITS):
        if at < 0:
            return
        if holds(at):
            yield at
        at = scanned.find(byte, at + 1)
    if at >= 0:
        common.add(byte[0])
        yield from rest(at)


def _regex_places(scanned: Any, first: int, regex: re.Pattern[bytes], common: set[int]) -> Iterator[int]:
    """Where `regex`, which starts with the byte `first`, matches in `scanned` (a place inside
    another match may be listed too)."""
    return _walk(
        scanned,
        bytes([first]),
        lambda at: regex.match(scanned, at) is not None,
        lambda at: (match.start() for match in regex.finditer(scanned, at)),
        common,
    )


def _rare_places(scanned: Any, data: bytes, rare: int, common: set[int]) -> Iterator[int]:
    """Where `data` is in `scanned`, walked by its byte at `rare`."""
    return (
        at - rare
        for at in _walk(
            scanned,
            data[rare : rare + 1],
            lambda at: scanned.startswith(data, at - rare),  # before 0, the tail is too short
            lambda at: (begin + rare for begin in _occurrences(scanned, data, max(at - rare, 0))),
            common,
        )
    )


class _Group:
    """Forms found by `re` tries of their pieces, one for each byte a piece starts with (a rare
    byte walked with memchr first, see `_walk`), and by `bytes.find` where a piece would start
    at a common byte or is one byte long (see `anchored_forms`). Each form
    is (searched bytes, folded, key, bytes in the log): the text scanned may be blurred, the
    log's own bytes are checked."""

    def __init__(self, forms: Sequence[tuple[bytes, bool, int, bytes]], cached: GroupState | None) -> None:
        searched = [
            (data, fold, 0) for data, fold in dict.fromkeys((data, fold) for data, fold, _k, _o in forms)
        ]
        # Choosing the pieces costs ~250 ms, compiling their regexes ~180: both are cached, the
        # regexes as their compiled code (rebuilt in ~2 ms, see regexes.py).
        sources, offsets = cached if cached is not None else ([], piece_offsets(searched))
        anchored = anchored_forms(searched, offsets)
        self.regexes: dict[int, re.Pattern[bytes]] = {}
        self.anchors: dict[bytes, list[tuple[bytes, int]]] = {}
        for data, fold, key, original in forms:
            if data in anchored and not fold:
                self.anchors.setdefault(data, []).append((original, key))
        if cached is None:
            trie_forms = [form for form in searched if form[1] or form[0] not in anchored]
            for first, source in build_patterns(trie_forms, offsets):
                self.regexes[first], code = compile_with_code(source)
                sources.append((first, source, code))
        else:
            self.regexes = {first: rebuild(source, code) for first, source, code in sources}
        self.state: GroupState = (sources, offsets)
        self._not_first = bytes(sorted(set(range(256)) - set(self.regexes)))
        self.finder = _Finder([form for form in forms if form[1] or form[0] not in anchored], offsets)
        self._rarest = {
            data: min(range(len(data)), key=lambda at: _COMMON.get(data[at], 1)) for data in self.anchors
        }
        self._common = set(_COMMON)  # the bytes walked no more (see `_walk`)

    def positions(self, scanned: Any) -> list[int]:
        """Where a piece of the trie or an anchored form starts in `scanned` (a position inside
        another piece's match may be listed too)."""
        found: list[int] = []
        for first, regex in self.regexes.items():
            found.extend(_regex_places(scanned, first, regex, self._common))
        for data in self.anchors:
            found.extend(_rare_places(scanned, data, self._rarest[data], self._common))
        return found

    def candidates(self, scanned: Any, start: int, end: int) -> Iterator[tuple[int, bytes, bool, int]]:
        """(begin, data, folded, key) of the forms whose searched bytes are in
        scanned[start:end]."""
        # a line holds the first bytes of few regexes: only theirs run
        for first in set(bytes(scanned[start:end]).translate(None, self._not_first)):
            regex = self.regexes[first]
            match = regex.search(scanned, start, end)
            while match is not None:
                yield from self.finder.at(scanned, match.start(), start, end)
                match = regex.search(scanned, match.start() + 1, end)
        for searched, originals in self.anchors.items():
            for at in _occurrences(scanned, searched, start, end):
                for data, key in originals:
                    yield at, data, False, key

    def hits(self, scanned: Any, block: Any, start: int, end: int) -> set[tuple[int, int]]:
        """(offset, key) of every form in block[start:end], its pieces found in `scanned`."""
        return {
            (begin, key)
            for begin, data, folded, key in self.candidates(scanned, start, end)
            if _holds(block, begin, data, folded)
        }

    def places(self, scanned: bytes) -> list[tuple[int, bytes, bool, int]]:
        """(begin, data, folded, key) of every form whose searched bytes are in `scanned`: where
        a line that reads as `scanned` once blurred may hold `data`."""
        return list(self.candidates(scanned, 0, len(scanned)))


# The blurred line texts remembered with their places, at most this many bytes of them, each
# counted with what Python spends on a bytes object and its dict or set entry (KNOWN_ENTRY) and on each
# place (KNOWN_PLACE): 4 MB of 10-byte texts took 38 MB. Of the bench's plog tree (its first 300
# MB), 65% of the bytes are in lines unique within their block; 3.9% are in texts not remembered
# (6.6% with a third less room, 16% with a third as much); RSS +14 MB. The training log: 8%.
KNOWN_BYTES = 12 << 20
KNOWN_ENTRY = 96
KNOWN_PLACE = 80
# Longer texts are not remembered: they seldom come again, and would crowd out the rest. A longer
# line is scanned in chunks cut at a CR or a space past LONG_CHUNK bytes (see _chunks); a chunk cut
# at a CR has under KNOWN_LINE bytes. The chunks have a memory of their own, of CHUNK_BYTES, so
# that a long line that never repeats does not push the lines out of theirs.
KNOWN_LINE = 4096
LONG_CHUNK = 2000
CHUNK_BYTES = 4 << 20
# Up to this many blurred texts are looked for with `bytes.find` through the block; more, by a
# walk over all its lines (a block of a million blank lines and one hit: 93 ms by the walk).
FOUND_BY_FIND = 16


def _line_starts(blurred: bytes, lines: list[bytes], wanted: list[bytes]) -> Iterator[tuple[int, bytes]]:
    """(start, line) of every line of `blurred` (split into `lines`) that is one of `wanted`."""
    if not wanted:
        return
    if len(wanted) <= FOUND_BY_FIND:
        framed = b"\n" + blurred + b"\n"
        for line in wanted:
            # framed[at] is the line end before the line: in the block, the line starts at `at`
            yield from ((at, line) for at in _occurrences(framed, b"\n" + line + b"\n"))
        return
    wanted_set = set(wanted)
    offset = 0
    for line in lines:
        if line in wanted_set:
            yield offset, line
        offset += len(line) + 1


Places = Sequence[tuple[int, bytes, bool, int]]  # (begin, data, folded, key) in a blurred text


def _chunks(text: bytes, reach: int) -> list[tuple[int, bytes]]:
    """(offset, bytes) of the chunks a long line is scanned in, so that a line that repeats itself
    (a progress bar redrawn after CRs, records with no line end between them) repeats its chunks
    and each is scanned once per run. A cut follows a CR, or else a space, at least LONG_CHUNK
    bytes past the last cut: where it falls depends on the bytes there, not on where the block
    began. Each chunk holds the `reach` bytes after it too, so a form that begins in a chunk
    ends inside it."""
    starts = [0]
    at = LONG_CHUNK
    while at < len(text):
        cut = text.find(b"\r", at, at + LONG_CHUNK)
        if cut < 0:
            cut = text.find(b" ", at)
        if not 0 <= cut < len(text) - 1:
            break
        starts.append(cut + 1)
        at = cut + 1 + LONG_CHUNK
    ends = [*starts[1:], len(text)]
    return [(start, text[start : end + reach]) for start, end in zip(starts, ends)]


class _KnownTexts:
    """Blurred texts scanned so far (lines, or the chunks of long ones), with their places, up to
    `budget` bytes of them. Two generations: when the young one is full it becomes the old one,
    and a text found there moves back, so the texts a log keeps printing stay while a burst of
    one-off texts passes through."""

    def __init__(self, budget: int) -> None:
        # Each generation keeps the texts with places in a dict and the many without in a set:
        # a block's texts are then sorted by set operations, which look them up in C.
        self._young: dict[bytes, Places] = {}
        self._young_bare: set[bytes] = set()
        self._old: dict[bytes, Places] = {}
        self._old_bare: set[bytes] = set()
        self._size = 0
        self._budget = budget

    def split(self, texts: Collection[bytes]) -> tuple[dict[bytes, Places], list[bytes]]:
        """The places of the known texts among `texts` that have any, and the texts not known."""
        rest = (texts if isinstance(texts, set) else set(texts)).difference(self._young_bare)
        young = self._young
        places = {text: young[text] for text in rest if text in young}
        new = [text for text in rest if text not in young]
        if not new or not (self._old or self._old_bare):
            return places, new
        old = self._old
        back = {text: old[text] for text in new if text in old}
        back_bare = self._old_bare.intersection(new)
        if not back and not back_bare:
            return places, new
        self._remember(back, back_bare)
        places.update(back)
        return places, [text for text in new if text not in back and text not in back_bare]

    def add(self, scanned: dict[bytes, Places]) -> None:
        """Remember texts just scanned with their places; a text over KNOWN_LINE bytes is not kept."""
        kept = [(text, found) for text, found in scanned.items() if len(text) <= KNOWN_LINE]
        self._remember(
            {text: found for text, found in kept if found}, [text for text, found in kept if not found]
        )

    def _remember(self, held: dict[bytes, Places], bare: Collection[bytes]) -> None:
        self._young.update(held)
        self._young_bare.update(bare)
        self._size += sum(map(len, held)) + sum(map(len, bare)) + KNOWN_ENTRY * (len(held) + len(bare))
        self._size += KNOWN_PLACE * sum(map(len, held.values()))
        if self._size > self._budget // 2:
            self._old, self._old_bare = self._young, self._young_bare
            self._young, self._young_bare, self._size = {}, set(), 0


class PythonPrefilter:
    """The pure-Python engine. Most forms are looked for in each block's lines blurred (hex
    digits read as 0) and made unique, so a line repeated with other numbers is scanned once;
    forms with fewer than BLURRED_MIN bytes that are not blurred (codes, the one-byte markers)
    are looked for in the block as it is. A blurred text is scanned once per run (`_KnownTexts`),
    a long line in chunks (`_chunks`). Each candidate line's forms are its text's places that
    its own bytes hold."""

    name = "python"

    def __init__(self, literals: Sequence[Literal], cached: PythonState | None = None) -> None:
        plain: list[tuple[bytes, bool, int, bytes]] = []
        blurred: list[tuple[bytes, bool, int, bytes]] = []
        for data, fold, key in literal_forms(literals):
            if _blurrable(data):
                blurred.append((data.translate(_BLUR), fold, key, data))
            else:
                plain.append((data, fold, key, data))
        self._plain = _Group(plain, cached[0] if cached else None)
        self._blurred = _Group(blurred, cached[1] if cached else None) if blurred else None
        self._known = _KnownTexts(KNOWN_BYTES)
        self._known_chunks = _KnownTexts(CHUNK_BYTES)
        self._reach = max((len(data) for data, _fold, _key, _original in blurred), default=1) - 1

    def serialize(self) -> PythonState:
        """What rebuilds this prefilter for the same literals without choosing its pieces again."""
        return self._plain.state, self._blurred.state if self._blurred is not None else None

    def spans(self, block: Any) -> Iterator[tuple[int, int, frozenset[int] | None]]:
        starts = {block.rfind(b"\n", 0, position) + 1 for position in self._plain.positions(block)}
        if self._blurred is not None:
            starts.update(self._blurred_starts(block))
        size = len(block)
        for start in sorted(starts):
            end = block.find(b"\n", start)
            if end < 0:
                end = size
            keys = {key for _begin, key in self._found(block, start, end)}
            if keys:
                yield start, end, line_keys(keys)

    def _blurred_starts(self, block: Any) -> list[int]:
        """The starts of the lines that hold a blurred form: found once per blurred text, then
        checked in each line's own bytes (a `python3.10` path reads as `python3.12` blurred).
        A text is scanned once per run, not once per block: a training log prints the same step
        lines all along, a plog tree the same lines in every rank's file."""
        blurred = block.translate(_BLUR)
        lines = blurred.split(b"\n")
        places = self._places(set(lines))
        held = [line for line, found in places.items() if found]
        return [
            start
            for start, line in _line_starts(blurred, lines, held)
            if any(_holds(block, start + begin, data, folded) for begin, data, folded, _key in places[line])
        ]

    def _places(self, texts: Collection[bytes]) -> dict[bytes, Places]:
        """The places of the blurred texts among `texts` that have any (and of the chunks of the
        long ones): remembered, or scanned now. No text holds a line end."""
        places, new = self._known.split(texts)  # a long text is never remembered
        long = {text: _chunks(text, self._reach) for text in new if len(text) > KNOWN_LINE}
        places.update(self._scanned([text for text in new if text not in long] if long else new, self._known))
        if not long:
            return places
        chunks = dict.fromkeys(chunk for pieces in long.values() for _at, chunk in pieces)
        in_chunks, new_chunks = self._known_chunks.split(chunks)
        in_chunks.update(self._scanned(new_chunks, self._known_chunks))
        for text, pieces in long.items():
            found = {
                (at + begin, data, folded, key)
                for at, chunk in pieces
                for begin, data, folded, key in in_chunks.get(chunk, ())
            }
            if found:
                places[text] = sorted(found)
        return places

    def _scanned(self, new: list[bytes], memory: _KnownTexts) -> dict[bytes, Places]:
        """The places of the texts among `new` (not known to `memory`) that have any, found by
        one scan of them joined by line ends; each is remembered unless over KNOWN_LINE bytes."""
        if not new:
            return {}
        places: dict[bytes, Places] = {}
        scanned: dict[bytes, Places] = dict.fromkeys(new, ())
        text = b"\n".join(new)
        for position in self._blurred.positions(text):
            start = text.rfind(b"\n", 0, position) + 1
            end = text.find(b"\n", position)
            line = text[start : end if end >= 0 else len(text)]
            if line not in places:
                places[line] = scanned[line] = self._blurred.places(line)
        memory.add(scanned)
        return places

    def hits(self, block: Any, start: int, end: int) -> list[tuple[int, int]]:
        """(offset, key) of every form that begins in [start, end) and ends there, in order."""
        return sorted(self._found(block, start, end))

    def _found(self, block: Any, start: int, end: int) -> set[tuple[int, int]]:
        found = self._plain.hits(block, block, start, end)
        if self._blurred is not None:
            window = bytes(block[start:end])
            found.update(
                (start + begin, key)
                for begin, data, folded, key in self._window_places(window.translate(_BLUR))
                if _holds(window, begin, data, folded)
            )
        return found

    def _window_places(self, blurred: bytes) -> Places:
        """The places of a window's blurred text: those remembered for it (a line `spans` has
        just scanned, a long line's chunks), or else those found in it alone, not remembered (a
        matched line's clean text seldom comes again)."""
        if b"\n" not in blurred:
            if len(blurred) > KNOWN_LINE:
                return self._places((blurred,)).get(blurred, ())
            places, new = self._known.split((blurred,))
            if not new:
                return places.get(blurred, ())
        return self._blurred.places(blurred)


class HyperscanPrefilter:
    """The hyperscan engine: every form compiled into one database, one scan per block."""

    name = "hyperscan"

    def __init__(self, literals: Sequence[Literal], serialized: bytes | None = None) -> None:
        import hyperscan

        forms = literal_forms(literals)
        # One-byte forms (the ESC and `{` markers) are found by `bytes.find`, which runs at
        # memory speed: in the database they slowed its scan of every block by 5-10%.
        searched = [form for form in forms if len(form[0]) > 1 or form[1]]
        single = [form for form in forms if len(form[0]) == 1 and not form[1]]
        self._keys = [key for _data, _fold, key in searched + single]
        self._lengths = [len(data) for data, _fold, _key in searched + single]
        self._single = [(data, len(searched) + index) for index, (data, _fold, _key) in enumerate(single)]
        self._database: Any = None
        if serialized is not None:
            self._database = hyperscan.loadb(serialized, hyperscan.HS_MODE_BLOCK)
        elif searched:
            self._database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            self._database.compile(
                expressions=[re.escape(data) for data, _fold, _key in searched],
                ids=list(range(len(searched))),
                elements=len(searched),
                flags=[hyperscan.HS_FLAG_CASELESS if fold else 0 for _data, fold, _key in searched],
            )
        self._scratch = hyperscan.Scratch(self._database) if self._database is not None else None

    def serialize(self) -> bytes | None:
        import hyperscan

        return hyperscan.dumpb(self._database) if self._database is not None else None

    def _matches(self, block: Any) -> list[tuple[int, int]]:
        """(end, form) of every form in `block`, in order."""
        found: list[tuple[int, int]] = []
        append = found.append

        def on_match(ident: int, _start: int, end: int, _flags: int, _context: object) -> None:
            append((end, ident))

        if self._database is not None:
            self._database.scan(bytes(block), match_event_handler=on_match, scratch=self._scratch)
        for data, ident in self._single:
            found.extend((at + 1, ident) for at in _occurrences(block, data))
        found.sort()
        return found

    def spans(self, block: Any) -> Iterator[tuple[int, int, frozenset[int] | None]]:
        end = -1
        start = 0
        keys: set[int] = set()
        for stop, ident in self._matches(block):
            if stop > end:
                if keys:
                    yield start, end, line_keys(keys)
                    keys = set()
                start = block.rfind(b"\n", 0, stop - 1) + 1
                end = block.find(b"\n", stop - 1)
                if end < 0:
                    end = len(block)
            keys.add(self._keys[ident])
        if keys:
            yield start, end, line_keys(keys)

    def hits(self, block: Any, start: int, end: int) -> list[tuple[int, int]]:
        window = block[start:end]
        lengths, keys = self._lengths, self._keys
        return sorted({(start + stop - lengths[ident], keys[ident]) for stop, ident in self._matches(window)})


class EveryLine:
    """Every line is a candidate and every literal is checked there: used when some pattern has
    no literal, and for small inputs, where compiling the prefilter costs more than it saves."""

    name = "every-line"

    def spans(self, block: Any) -> Iterator[tuple[int, int, frozenset[int] | None]]:
        start = 0
        size = len(block)
        while start < size:
            end = block.find(b"\n", start)
            if end < 0:
                end = size
            yield start, end, None
            start = end + 1

    def hits(self, block: Any, start: int, end: int) -> list[tuple[int, int]]:
        return [(offset, WEIRD) for offset in range(start, end, 4096)]


def hyperscan_available() -> bool:
    return hyperscan_missing() is None


def require_engine(engine: str) -> None:
    """Refuse, before any work, an engine asked for by name that this install lacks."""
    if engine != "hyperscan":
        return
    reason = hyperscan_missing()
    if reason is not None:
        raise ConfigError(f"--engine hyperscan: {reason}; --engine auto reads with the pure-Python engine")


def engine_name(engine: str) -> str:
    """`auto` resolved: hyperscan when it imports, else python."""
    if engine == "auto":
        return "hyperscan" if hyperscan_available() else "python"
    return engine


def make_prefilter(literals: Sequence[Literal], engine: str, complete: bool, cached: Any = None) -> Any:
    """The prefilter for `engine` (auto|python|hyperscan); EveryLine if some pattern has no literal.
    `cached` is what `serialize()` gave for the same literals earlier, or None."""
    if not complete:
        return EveryLine()
    if engine_name(engine) == "hyperscan":
        return HyperscanPrefilter(literals, cached)
    return PythonPrefilter(literals, cached)
