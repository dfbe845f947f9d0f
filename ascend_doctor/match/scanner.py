"""Scan one byte stream: large chunks, prefilter per block, decode and match only candidate lines.

Memory stays bounded whatever the input: blocks are at most CHUNK plus one line, and a line
longer than MAX_LINE is matched in windows of MAX_LINE (the rest of it is said, not dropped).
Every line is matched with the bytes the file holds around it, whatever block it falls in: the
bytes before a block are kept as its context (the look-back of its first lines, and the line a
message was wrapped from), and a block's last line waits for the next read when the start of the
line after it is not read yet. So where reads end changes no finding, except inside a line over
MAX_LINE.
"""

from __future__ import annotations

import mmap
from collections.abc import Callable
from typing import BinaryIO, Union

from ascend_doctor.match import prefilter
from ascend_doctor.match.matcher import Matcher
from ascend_doctor.model import CODE, PROSE, Evidence, Match
from ascend_doctor.read import events
from ascend_doctor.read.tracebacks import TAIL
from ascend_doctor.read.world import HEAD

Buffer = Union[bytes, mmap.mmap]

CHUNK = 1024 * 1024
MAX_LINE = 1024 * 1024
WINDOW_OVERLAP = 4096
MAX_CONTINUATION = 512
MAX_EVIDENCE_TEXT = 1000
WINDOW = 8 * 1024
LOOKBACK = 4 * 1024
# Colour codes may take up to this many times the bytes of what they colour in a neighbour or a
# look-back: past that, their bytes count as shown (the buffer holds what is kept before a line).
CODES_MAX = 8
# Matches kept per rule and rank of one input; later ones are counted (see StreamScanner._keep).
KEEP_PER_RULE = 1000


class ScanResult:
    """What one input yielded, filled in as the scan goes."""

    def __init__(self) -> None:
        self.matches: list[Match] = []
        self.lines = 0
        self.size = 0
        self.long_lines = 0  # parts of over-long lines matched only around literals
        self.error = ""  # why reading stopped before the end (a truncated compressed log)
        self.tail = b""  # the last TAIL bytes of the lines scanned, for the exceptions they end with
        self.tail_end = 1  # the line the tail's last line end is followed by (1 + line ends read)
        self.head = b""  # the first HEAD bytes, for the launch lines that state the world size


def long_lines_note(count: int) -> str:
    return f"{count} very long line part(s) were matched only around rule keywords"


PLOG_PROBE = 256  # the bytes of an input's start that tell whether it is a CANN plog


def keeps_tail(start: bytes) -> bool:
    """Whether an input that starts with `start` keeps its last bytes for the exception it died of:
    not a CANN plog, which holds no Python traceback."""
    return not events.plog_start(start)


class StreamScanner:
    """Scans one input; `line` numbers are 1-based and count `\\n` only."""

    def __init__(
        self,
        matcher: Matcher,
        label: str,
        input_index: int,
        progress: Callable[[int], None] | None = None,
        tail_wanted: bool | None = None,
    ) -> None:
        self.matcher = matcher
        self.label = label
        self.input_index = input_index
        self.progress = progress
        self.result = ScanResult()
        self.path_rank = events.rank_of_path(label)
        self._seen: set[tuple[int, int]] = set()
        self._kept: dict[tuple[str, int | None], int] = {}  # matches kept per rule and rank
        self._latest: dict[tuple[str, int | None], int] = {}  # where the last of them stands
        # A CANN plog holds no Python traceback: no tail. Decided on the input's first bytes; a part of
        # a big file after the first is told what its file's start decided.
        self._tail_wanted = tail_wanted

    def scan(
        self,
        stream: BinaryIO,
        first: bytes = b"",
        context: bytes = b"",
        stop: int = -1,
        errors: tuple[type[BaseException], ...] = (),
    ) -> ScanResult:
        """Scan `first`, then the rest of `stream`. A part of a file comes with the `context` of
        the bytes before it (its first lines' neighbours and look-back) and a `stop`: lines that
        begin `stop` bytes or more into it are the next part's, read only as neighbours. A read
        that raises one of `errors` ends the input there: what was read before is still matched,
        and `result.error` says why."""
        # One reused buffer: the bytes before the lines still to match (their context), those
        # lines, then the next chunk read into place.
        buffer = _read_buffer()
        view = memoryview(buffer)
        lo = len(context)  # where the lines still to match begin
        buffer[:lo] = context
        buffer[lo : lo + len(first)] = first
        filled = lo + len(first)
        base = -lo  # the stream offset of buffer[0]
        newlines = 0
        read_into = getattr(stream, "readinto", None)
        while True:
            try:
                if read_into is not None:
                    count = read_into(view[filled : filled + CHUNK]) or 0
                else:
                    data = stream.read(CHUNK)
                    count = len(data)
                    buffer[filled : filled + count] = data
            except errors as exc:
                self.result.error = str(exc)
                count = 0
            self.result.size += count
            if self.progress is not None and count:
                self.progress(count)
            if not count:
                break
            filled += count
            cut = buffer.rfind(b"\n", lo, filled)
            if cut < 0:
                if filled - lo > MAX_LINE:  # the part of an over-long line read so far; a tail is kept
                    self._block(buffer, lo, filled, filled, newlines)  # so that no literal is cut
                    self._keep_tail(buffer, lo, filled)
                    buffer.move(0, filled - WINDOW_OVERLAP, WINDOW_OVERLAP)
                    base += filled - WINDOW_OVERLAP
                    filled, lo = WINDOW_OVERLAP, 0
                continue
            hi = _settled(buffer, lo, cut, filled)
            if stop >= 0:
                hi = min(hi, max(lo, stop - base))
            if hi > lo:
                end = _neighbour_end(buffer, hi, filled)
                newlines += self._block(buffer, lo, hi, filled if end is None else end, newlines)
                self._keep_tail(buffer, lo, hi)
                keep = context_start(buffer, hi)
                buffer.move(0, keep, filled - keep)
                base += keep
                filled, lo = filled - keep, hi - keep
        self.result.size += len(first)
        hi = filled if stop < 0 else min(filled, max(lo, stop - base))
        ended = True
        if hi > lo:
            ended = buffer[hi - 1] == ord("\n")
            newlines += self._block(buffer, lo, hi, filled, newlines)
            self._keep_tail(buffer, lo, hi)
        if stop >= 0:
            self.result.size = min(self.result.size, stop)
        view.release()
        self.result.tail_end = newlines + 1
        self.result.lines = newlines + (0 if ended else 1)
        return self.result

    def _keep_tail(self, buffer: mmap.mmap, lo: int, hi: int) -> None:
        """Keep the first HEAD and the last TAIL bytes of the lines scanned: at most two copies of
        TAIL bytes a block.
        None of a CANN plog (its first line tells), which only the runtime writes: a plog tree has
        thousands of files."""
        if self._tail_wanted is None:
            self._tail_wanted = keeps_tail(buffer[lo : lo + PLOG_PROBE])
            self.result.head = buffer[lo : min(hi, lo + HEAD)] if self._tail_wanted else b""
        if not self._tail_wanted:
            return
        if hi - lo >= TAIL:
            self.result.tail = buffer[hi - TAIL : hi]
        else:
            self.result.tail = (self.result.tail + buffer[lo:hi])[-TAIL:]

    def _block(self, buffer: mmap.mmap, lo: int, hi: int, end: int, newlines: int) -> int:
        """Match the candidate lines in buffer[lo:hi], whose first line is line `newlines + 1`;
        the bytes before and after, to `end`, are their neighbours and look-back. Return the
        number of line ends in it (counted on the way, once). The block is copied out of the
        buffer with its colour codes removed (they hold no line end) and freed on return, so one
        block at a time is alive: with two, glibc gave each new block fresh pages, and page faults
        were 10-20% of a big scan (see Matcher.block_done)."""
        if buffer.find(b"\x1b", 0, end) < 0:
            return self._lines_of(buffer[:end], lo, hi, newlines)
        view = memoryview(buffer)
        block = events.ANSI_BYTES.sub(b"", view[:end])
        head = len(events.ANSI_BYTES.sub(b"", view[:lo]))
        tail = len(events.ANSI_BYTES.sub(b"", view[hi:end]))
        return self._lines_of(block, head, len(block) - tail, newlines)

    def _lines_of(self, block: bytes, lo: int, hi: int, newlines: int) -> int:
        counted_to = lo
        line_number = newlines + 1
        matcher = self.matcher
        for start, end, keys in matcher.prefilter_for(block).spans(block):
            if start < lo:
                continue  # a line of the context, matched with the block before
            if start >= hi:
                break  # a neighbour, matched with the next block
            line_number += line_ends(block, counted_to, start)
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
        return line_number - 1 - newlines + line_ends(block, counted_to, hi)

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
        code = events.quoted_source(text, previous)
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
                if rank is None:
                    rank = events.rank_in_failure_summary(before)
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
                quoted = CODE if code and position == 0 else PROSE if events.prose(piece, hit.span) else ""
                match = Match(rule_id, hit.pattern_index, evidence, self.input_index, hit.wrap, quoted)
                self._keep(match)

    def _keep(self, match: Match) -> None:
        """Keep the first KEEP_PER_RULE matches of a rule and rank; past them the last kept one is
        replaced by the newest (its time and line are what a run's end is judged by), counting the
        ones it stands for: memory stays bounded however long the job repeats itself."""
        key = (match.rule_id, match.evidence.rank)
        kept = self._kept.get(key, 0)
        matches = self.result.matches
        if kept < KEEP_PER_RULE:
            self._kept[key] = kept + 1
            self._latest[key] = len(matches)
            matches.append(match)
            return
        latest = self._latest[key]
        matches[latest] = match._replace(repeats=matches[latest].repeats + 1)


_buffer: list[mmap.mmap] = []


def _read_buffer() -> mmap.mmap:
    """The process's read buffer, made once: a fresh 3 MiB buffer per file cost a 5,000-file
    plog tree half a second in page faults. Anonymous memory is zeroed by the kernel as it is
    first touched, so a 10-line log does not pay for the 3 MiB (a bytearray is zeroed whole).
    Private: a worker forked after the parent made it must not write into the parent's."""
    if not _buffer:
        private = {"flags": mmap.MAP_PRIVATE} if hasattr(mmap, "MAP_PRIVATE") else {}
        _buffer.append(mmap.mmap(-1, CODES_MAX * LOOKBACK + MAX_LINE + 2 * CHUNK, **private))
    return _buffer[0]


def _settled(buffer: mmap.mmap, lo: int, cut: int, filled: int) -> int:
    """Where the lines that can be matched now end, in a buffer whose last line end is at `cut`:
    each needs the start of the line after it, for a message wrapped there. The last whole line
    waits for the next read unless enough of the next line is read already, or it is so long that
    it is matched in windows, which take no neighbours."""
    if _neighbour_end(buffer, cut + 1, filled) is not None:
        return cut + 1
    last = max(lo, buffer.rfind(b"\n", lo, cut) + 1)
    return cut + 1 if cut - last > events.MAX_SEGMENT else last


def _neighbour_end(buffer: mmap.mmap, start: int, filled: int) -> int | None:
    """The end of what the line at `start` lends the line before it as its neighbour: up to its
    line end, at most MAX_CONTINUATION bytes once colour codes are removed. None when the bytes
    read do not reach that far yet."""
    line_end = buffer.find(b"\n", start, filled)
    stop = filled if line_end < 0 else line_end
    end = start + MAX_CONTINUATION
    while end < stop:
        shown = len(events.ANSI_BYTES.sub(b"", buffer[start : _outside_code(buffer, start, end)]))
        if shown >= MAX_CONTINUATION or end - start >= CODES_MAX * MAX_CONTINUATION:
            return end
        end += MAX_CONTINUATION - shown
    return stop if line_end >= 0 else None


def context_start(buffer: Buffer, hi: int) -> int:
    """Where the bytes kept before the line at `hi` begin: LOOKBACK bytes once colour codes are
    removed (its look-back), not inside a code."""
    keep = _outside_code(buffer, 0, max(0, hi - LOOKBACK))
    while keep and buffer.find(b"\x1b", keep, hi) >= 0:
        shown = len(events.ANSI_BYTES.sub(b"", buffer[keep:hi]))
        if shown >= LOOKBACK or hi - keep >= CODES_MAX * LOOKBACK:
            break
        keep = _outside_code(buffer, 0, max(0, keep - (LOOKBACK - shown)))
    return keep


def _outside_code(buffer: Buffer, low: int, at: int) -> int:
    """`at`, or the start of the colour code it would cut (codes hold no line end)."""
    escape = buffer.rfind(b"\x1b", max(low, buffer.rfind(b"\n", low, at) + 1), at)
    if escape < 0:
        return at
    code = events.ANSI_BYTES.match(buffer, escape)
    return escape if code is None or code.end() > at else at


# Line ends are counted by deleting them where a sample of the span has lines of usual length:
# `bytes.replace` finds them with memchr, and took 40 ms a 100 MB log against `bytes.count`'s 60,
# which looks at every byte. On very short lines it is far slower (blank lines: 15x), so a span
# whose first or last LINE_SAMPLE bytes average under LINE_SAMPLE / SHORT_LINES bytes a line is
# counted byte by byte.
LINE_SAMPLE = 4096
SHORT_LINES = 64


def line_ends(data: bytes, start: int, end: int) -> int:
    """The number of `\\n` in data[start:end]."""
    if (
        end - start < 4 * LINE_SAMPLE
        or data.count(b"\n", start, start + LINE_SAMPLE) > SHORT_LINES
        or data.count(b"\n", end - LINE_SAMPLE, end) > SHORT_LINES
    ):
        return data.count(b"\n", start, end)
    span = data[start:end]
    return len(span) - len(span.replace(b"\n", b""))


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
