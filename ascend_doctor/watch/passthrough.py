"""Bytes passed through to one of our streams as they arrive, and standard input read that way.

Everything here writes to and reads from file descriptors directly: a buffered stream would hold
a job's output back until its buffer filled (a few lines of a slow job for minutes), and would read
on until a buffer of input was full before handing any of it on.
"""

from __future__ import annotations

import io
import os
from typing import Any

READ_SIZE = 64 * 1024


class PassThrough:
    """Copies bytes to a file descriptor, whole and unchanged. Once that cannot be done (the reader
    of a pipe has gone: `ascend-doctor run -- job | head`) `closed` says so, and the rest is
    dropped."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.closed = False

    def write(self, data: bytes | memoryview) -> None:
        view = memoryview(data)
        while view and not self.closed:
            try:
                view = view[os.write(self.fd, view) :]
            except BrokenPipeError:
                self.closed = True
            except OSError:  # a full disk or a closed descriptor: the same for the job's output
                self.closed = True


class TeeInput(io.RawIOBase):
    """A file descriptor read as its bytes arrive, each read copied to `copy` before it is
    handed on (`diagnose - --tee`). Reads return what the pipe holds, never wait for more."""

    def __init__(self, fd: int, copy: PassThrough) -> None:
        super().__init__()
        self._fd = fd
        self._copy = copy

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = os.read(self._fd, min(len(buffer), READ_SIZE))
        self._copy.write(data)
        buffer[: len(data)] = data
        return len(data)

    def drain(self) -> None:
        """Copy the rest of the input: the scan stops early on an input it cannot read as a log
        (binary data), and nothing piped through may be lost."""
        while self.read(READ_SIZE):
            pass
