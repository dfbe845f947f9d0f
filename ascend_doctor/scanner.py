"""Scan one byte stream: large chunks, prefilter per block, decode and match only candidate lines.

Memory stays bounded whatever the input: blocks are at most CHUNK plus one line, and a line
longer than MAX_LINE is matched in windows of MAX_LINE (the rest of it is said, not dropped).
"""

from __future__ import annotations

import mmap
from collections.abc import Callable
from typing import BinaryIO

from ascend_doctor import events, prefilter
from ascend_doctor.matcher import Matcher
from ascend_doctor.model import Evidence, Match

CHUNK = 1024 * 1024
MAX_LINE = 1024 * 1024
WINDOW_OVERLAP = 4096
MAX_CONTINUATION = 512
MAX_EVIDENCE_TEXT = 1000
WINDOW = 8 * 1024
LOOKBACK = 4 * 1024


class ScanResult:
    """What one input yielded, filled in as the scan goes."""

    def __init__(self) -> None:
        self.matches: list[Match] = []
        self.lines = 0
        self.size = 0
        self.long_lines = 0  # parts of over-long lines matched only around literals


def long_lines_note(count: int) -> str:
    return f"{count} very long line part(s) were matched only around rule keywords"


class StreamScanner:
    """Scans one input; `line` numbers are 1-based and count `\\n` only."""

    def __init__(
        self,
        matcher: Matcher,
        label: str,
        input_index: int,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        self.matcher = matcher
        self.label = label
        self.input_index = input_index
        self.progress = progress
        self.result = ScanResult()
        self.path_rank = events.rank_of_path(label)
        self._seen: set[tuple[int, int]] = set()

    def scan(self, stream: BinaryIO, first: bytes = b"") -> ScanResult:
        # One reused buffer: the partial line left from the last block, then the next chunk read
        # into place (room for a partial line of up to MAX_LINE + CHUNK and one more chunk).
        buffer = _read_buffer()
        view = memoryview(buffer)
        buffer[: len(first)] = first
        filled = len(first)
        newlines = 0
        read_into = getattr(stream, "readinto", None)
        while True:
            if read_into is not None:
                count = read_into(view[filled : filled + CHUNK]) or 0
            else:
                data = stream.read(CHUNK)
                count = len(data)
                buffer[filled : filled + count] = data
            self.result.size += count
            if self.progress is not None and count:
                self.progress(count)
            if not count:
                break
            filled += count
            cut = buffer.rfind(b"\n", 0, filled)
            if cut < 0:
                if filled > MAX_LINE:  # the part of an over-long line read so far; a tail is kept
                    self._block(buffer, filled, newlines)  # so that no literal is cut
                    buffer.move(0, filled - WINDOW_OVERLAP, WINDOW_OVERLAP)
                    filled = WINDOW_OVERLAP
                continue
            newlines += self._block(buffer, cut + 1, newlines)
            filled -= cut + 1
            buffer.move(0, cut + 1, filled)
        self.result.size += len(first)
        if filled:
            ended = buffer[filled - 1] == ord("\n")
            newlines += self._block(buffer, filled, newlines) + (0 if ended else 1)
        view.release()
        self.result.lines = newlines
        return self.result

    def _block(self, buffer: mmap.mmap, end: int, newlines: int) -> int:
        """Match the candidate lines of buffer[:end], whose first line is line `newlines + 1`;
        return the number of line ends in it (counted on the way, once). The block is copied out
        of the buffer with its colour codes removed (they hold no line end) and freed on return,
        so one block at a time is alive: with two, glibc gave each new block fresh pages, and page
        faults were 10-20% of a big scan (see Matcher.block_done)."""
        if buffer.find(b"\x1b", 0, end) < 0:
            return self._lines_of(buffer[:end], newlines)
        return self._lines_of(events.ANSI_BYTES.sub(b"", memoryview(buffer)[:end]), newlines)

    def _lines_of(self, block: bytes, newlines: int) -> int:
        counted_to = 0
        line_number = newlines + 1
        matcher = self.matcher
        for start, end, keys in matcher.prefilter_for(block).spans(block):
            line_number += block.count(b"\n", counted_to, start)
            counted_to = start
            if end - start <= events.MAX_SEGMENT:
                bounds = _bounds(block, start, end)
                if not matcher.worth(block, bounds, keys):
                    continue  # no pattern of its literals can match here: skip decoding it
                neighbours = (block[bounds[0] : max(start - 1, 0)], block[end + 1 : bounds[3]])
                matcher.line_keys = keys
                self._line(block[start:end], line_number, neighbours, block[max(0, start - LOOKBACK) : start])
                continue
            before = block[max(0, start - LOOKBACK) : start]
            for window_start, window_end, window_keys in self._windows(block, start, end):
                matcher.line_keys = window_keys
                self._line(block[window_start:window_end], line_number, (b"", b""), before)
        matcher.block_done()
        return line_number - 1 - newlines + block.count(b"\n", counted_to)

    def _windows(self, block: bytes, start: int, end: int) -> list[tuple[int, int, frozenset[int] | None]]:
        """Windows around the literal hits of one very long line, merged where they overlap, each
        with the literals it holds (None where a byte can hide one: every literal is checked)."""
        self.result.long_lines += 1
        windows: list[tuple[int, int, set[int]]] = []
        for hit, key in self.matcher.prefilter.hits(block, start, end):
            low, high = max(start, hit - WINDOW), min(end, hit + WINDOW)
            if windows and low <= windows[-1][1]:
                windows[-1] = (windows[-1][0], high, windows[-1][2])
            else:
                windows.append((low, high, set()))
            windows[-1][2].add(key)
        return [(low, high, prefilter.line_keys(keys)) for low, high, keys in windows]

    def _line(self, raw: bytes, line_number: int, neighbours: tuple[bytes, bytes], before: bytes) -> None:
        text = events.decode(raw[:MAX_LINE])
        if events.skipped_plog_level(text):
            return
        timestamp: float | None = None
        timed = False
        pieces = events.segments(text)
        previous, following = (_edge_segment(raw, last) for raw, last in zip(neighbours, (True, False)))
        for position, (piece, prefix_rank) in enumerate(pieces):
            wrap_before = previous if position == 0 else ""
            wrap_after = following if position == len(pieces) - 1 else ""
            for hit in self.matcher.match(piece, wrap_before, wrap_after):
                key = (hit.rule_index, line_number)
                if key in self._seen:
                    continue
                self._seen.add(key)
                rank = prefix_rank if prefix_rank is not None else events.rank_in_text(piece)
                if rank is None:
                    rank = events.rank_by_process(piece, before)
                if not timed:
                    timestamp = events.timestamp_of(text) or events.last_timestamp(before)
                    timed = True
                evidence = Evidence(
                    path=self.label,
                    line=line_number,
                    text=_shown(piece, hit.span),
                    rank=rank if rank is not None else self.path_rank,
                    timestamp=timestamp,
                    captures=hit.captures,
                )
                rule_id = self.matcher.rules[hit.rule_index].id
                self.result.matches.append(Match(rule_id, hit.pattern_index, evidence, self.input_index))


_buffer: list[mmap.mmap] = []


def _read_buffer() -> mmap.mmap:
    """The process's read buffer, made once: a fresh 3 MiB buffer per file cost a 5,000-file
    plog tree half a second in page faults. Anonymous memory is zeroed by the kernel as it is
    first touched, so a 10-line log does not pay for the 3 MiB (a bytearray is zeroed whole).
    Private: a worker forked after the parent made it must not write into the parent's."""
    if not _buffer:
        private = {"flags": mmap.MAP_PRIVATE} if hasattr(mmap, "MAP_PRIVATE") else {}
        _buffer.append(mmap.mmap(-1, MAX_LINE + 2 * CHUNK, **private))
    return _buffer[0]


def _bounds(block: bytes, start: int, end: int) -> tuple[int, int, int, int]:
    """(start of the previous line, start, end, end of the next line), each neighbour cut to
    MAX_CONTINUATION bytes."""
    first = start if start == 0 else max(block.rfind(b"\n", 0, start - 1) + 1, start - 1 - MAX_CONTINUATION)
    if end >= len(block):
        return first, start, end, end
    following = block.find(b"\n", end + 1, end + 1 + MAX_CONTINUATION)
    return first, start, end, following if following >= 0 else min(len(block), end + 1 + MAX_CONTINUATION)


def _shown(piece: str, span: tuple[int, int]) -> str:
    """The evidence text of a matched segment: a plog line's level, module and message, and of a
    line over MAX_EVIDENCE_TEXT characters the part around the match, marked `…` where cut."""
    message = events.plog_message(piece)
    if message is not None and len(message) <= MAX_EVIDENCE_TEXT:
        return message
    if len(piece) <= MAX_EVIDENCE_TEXT:
        return piece
    start, end = span
    room = MAX_EVIDENCE_TEXT - 2  # for the two marks
    begin = max(0, min(start - max(room - (end - start), 0) // 2, len(piece) - room))
    return ("…" if begin else "") + piece[begin : begin + room] + ("…" if begin + room < len(piece) else "")


def _edge_segment(raw: bytes, last: bool) -> str:
    """The clean segment of a neighbour line that touches this one (its last or first piece)."""
    if not raw:
        return ""
    pieces = events.segments(events.decode(raw))
    if not pieces:
        return ""
    return pieces[-1 if last else 0][0]
