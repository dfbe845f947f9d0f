"""A running command's stdout and stderr: each passed through to ours as it arrives, and both
handed to the scan as one stream of whole lines, as `2>&1` would join them.

The pass-through is byte for byte and read by read, each stream on its own. The scan gets whole
lines, so that a line on stderr never lands in the middle of one on stdout; a line held back that
grows past MAX_HELD (a progress bar redrawn with `\\r` for hours) is handed on as it is, and a line
of the other stream after it starts on a line of its own. Memory stays bounded whatever the
command prints: one read, and at most MAX_HELD per stream.
"""

from __future__ import annotations

import io
import os
import selectors
import subprocess
from typing import Any, BinaryIO

from ascend_doctor.watch.passthrough import READ_SIZE, PassThrough

MAX_HELD = 1024 * 1024
# After the command has ended, its output pipes may be held open by a process it left behind (a
# server started with `&`): stop reading once they have been quiet this long.
QUIET_AFTER_EXIT = 2.0
POLL = 0.5


class ChildOutput(io.RawIOBase):
    """Readable like a file: the joined lines of `process`'s stdout and stderr. `log`, when given,
    receives the same bytes the scan does (evidence line numbers are that file's)."""

    def __init__(
        self, process: subprocess.Popen[bytes], out: PassThrough, err: PassThrough, log: BinaryIO | None
    ) -> None:
        super().__init__()
        assert process.stdout is not None and process.stderr is not None
        self._process = process
        self._selector = selectors.DefaultSelector()
        self._streams: dict[int, tuple[int, PassThrough, BinaryIO]] = {}
        for number, (pipe, copy) in enumerate(((process.stdout, out), (process.stderr, err))):
            self._streams[pipe.fileno()] = (number, copy, pipe)
            self._selector.register(pipe.fileno(), selectors.EVENT_READ)
        self._held = (bytearray(), bytearray())
        self._ready = bytearray()
        self._open: int | None = None  # the stream whose line the scan has been handed part of
        self._log = log
        self.log_error = ""
        self.left_open = False  # stopped reading: a process left behind held the pipes open

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._ready and self._selector.get_map():
            self._pump()
        count = min(len(buffer), len(self._ready))
        buffer[:count] = self._ready[:count]
        del self._ready[:count]
        return count

    def drain(self) -> None:
        """Pass the rest through: the scan may stop before the end (output it cannot read as a
        log), and the command must neither lose its output nor block on a full pipe."""
        while self.read(READ_SIZE):
            pass

    def _pump(self) -> None:
        ended = self._process.poll() is not None
        ready = self._selector.select(QUIET_AFTER_EXIT if ended else POLL)
        if not ready and ended:
            self.left_open = True
            for fd in list(self._selector.get_map()):
                self._close(fd)
            return
        for key, _events in ready:
            fd = int(key.fd)
            data = os.read(fd, READ_SIZE)
            if not data:
                self._close(fd)
                continue
            number, copy, _pipe = self._streams[fd]
            copy.write(data)
            self._hold(number, data)
            if copy.closed:  # nobody reads ours any more: the job learns it as in a pipe (EPIPE)
                self._close(fd)

    def _close(self, fd: int) -> None:
        self._selector.unregister(fd)
        number, _copy, pipe = self._streams[fd]
        self._hand_on(number, bytes(self._held[number]))  # its last line, even without a line end
        self._held[number].clear()
        pipe.close()

    def _hold(self, number: int, data: bytes) -> None:
        held = self._held[number]
        held += data
        cut = held.rfind(b"\n") + 1
        if not cut and len(held) > MAX_HELD:
            cut = len(held)
        if cut:
            self._hand_on(number, bytes(held[:cut]))
            del held[:cut]

    def _hand_on(self, number: int, data: bytes) -> None:
        if not data:
            return
        if self._open is not None and self._open != number:
            data = b"\n" + data
        self._open = None if data.endswith(b"\n") else number
        self._ready += data
        if self._log is not None:
            try:
                self._log.write(data)
            except OSError as exc:
                self.log_error = exc.strerror or str(exc)
                self._log = None


def open_log(path: str) -> BinaryIO:
    """The file `--log` names, gzip-compressed when it ends in `.gz`. A plain one is written
    unbuffered, so `tail -f` shows each line as the job prints it."""
    if path.endswith(".gz"):
        import gzip

        return gzip.open(path, "wb", compresslevel=6)  # level 9 costs several times the time for ~5% less
    return open(path, "wb", buffering=0)
