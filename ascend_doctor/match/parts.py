"""One big plain log scanned by several workers, in parts that see exactly what the whole scan sees.

The scanner matches every line with the bytes the file holds around it (its neighbours and its
look-back), whatever block it falls in. A part starts at a line start with the bytes before it
as context, and reads on past its end by the start of the next part's first line, its own last
line's neighbour. It starts just before a read's end in the whole scan and is first fed the bytes
up to it: from there on its reads end where the whole scan's do, which a line over MAX_LINE needs
(it is matched in windows cut at the reads). So the findings are the same, and the line numbers
are made whole by adding the lines of the parts before.
"""

from __future__ import annotations

import io
from typing import Any, BinaryIO, NamedTuple

from ascend_doctor.match.scanner import CHUNK, CODES_MAX, LOOKBACK, MAX_CONTINUATION, context_start
from ascend_doctor.read.sources import SNIFF, plain_text

# A plain file at least twice this size is split into parts of about this size.
PART_BYTES = 32 * 1024 * 1024
TAIL = 64 * 1024


class Part(NamedTuple):
    """Bytes [start, end) of a file (end -1: to its end); the scan of [start, aligned) is the
    partial line the whole scan carries into the read that ends at `aligned`."""

    number: int
    start: int
    aligned: int
    end: int


def plan(path: str, size: int, workers: int = 1, part_bytes: int | None = None) -> list[Part]:
    """The parts of a file worth splitting, or [] (small, compressed, binary or UTF-16). Their
    number is a multiple of `workers`, so all finish together (a 100 MB log on two workers is
    four parts, not three), each at most about PART_BYTES and at least a quarter of it."""
    if part_bytes is None:
        if size < 2 * PART_BYTES:
            return []
        workers = max(1, workers)
        count = workers * -(-size // (workers * PART_BYTES))
        part_bytes = max(PART_BYTES // 4, -(-size // count))
    if size < 2 * part_bytes or not plain_text(path):
        return []
    cuts: list[tuple[int, int]] = [(0, SNIFF)]
    try:
        with open(path, "rb") as handle:
            for target in range(part_bytes, size - part_bytes // 2, part_bytes):
                aligned = SNIFF + max(1, round((target - SNIFF) / CHUNK)) * CHUNK
                start = _after_last_line_end(handle, aligned)
                # None: no line end in the chunk, the whole scan is inside an over-long line there.
                if start is not None and start > cuts[-1][0] and aligned < size:
                    cuts.append((start, aligned))
    except OSError:
        return []
    if len(cuts) < 2:
        return []
    ends = [start for start, _aligned in cuts[1:]] + [-1]
    return [Part(number, *cut, end) for number, (cut, end) in enumerate(zip(cuts, ends))]


def _after_last_line_end(handle: Any, aligned: int) -> int | None:
    """Where the whole scan's block ends for the read that ends at `aligned`: after the last line
    end in the CHUNK before it. The last 64 KiB nearly always hold one; the chunk is read only
    when they do not."""
    for length in (min(TAIL, CHUNK), CHUNK):
        handle.seek(aligned - length)
        cut = handle.read(length).rfind(b"\n")
        if cut >= 0:
            return aligned - length + cut + 1
    return None


class OpenPart(NamedTuple):
    """What the scanner is given for a part (see StreamScanner.scan)."""

    stream: BinaryIO
    first: bytes
    context: bytes
    stop: int


def open_part(path: str, part: Part) -> OpenPart:
    """The part's stream, with the bytes before it as context; it reads on past the part's end by
    the start of the next part's first line, the neighbour of its own last line."""
    handle = open(path, "rb")  # noqa: SIM115 - closed by the caller
    try:
        handle.seek(max(0, part.start - CODES_MAX * LOOKBACK))
        before = handle.read(part.start - handle.tell())
        first = handle.read(part.aligned - part.start)
    except OSError:
        handle.close()
        raise
    context = before[context_start(before, len(before)) :]
    if part.end < 0:
        return OpenPart(handle, first, context, -1)
    stream = _Bounded(handle, part.end - part.aligned + CODES_MAX * MAX_CONTINUATION)
    return OpenPart(stream, first, context, part.end - part.start)


class _Bounded(io.RawIOBase):
    """A file read up to a limit: the part after it is another worker's."""

    def __init__(self, handle: Any, remaining: int) -> None:
        self._handle = handle
        self._remaining = remaining

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._remaining <= 0:
            return 0
        with memoryview(buffer) as view:
            count = self._handle.readinto(view[: self._remaining]) or 0
        self._remaining -= count
        return count

    def close(self) -> None:
        self._handle.close()
        super().close()
