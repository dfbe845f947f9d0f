"""Progress on stderr while a large input is read, only when stderr is a terminal."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Callable, Protocol

SHOW_ABOVE_BYTES = 32 * 1024 * 1024


class Progress(Protocol):
    """What the engine reports while it reads: first the total, then the bytes as they are read."""

    def sized(self, total: int | None) -> None:
        """The bytes there are to read (None when unknown: stdin)."""

    def __call__(self, count: int) -> None:
        """`count` more bytes were read."""


@contextmanager
def byte_progress() -> Iterator[Progress | None]:
    """A progress bar for the engine, or None when nothing can be shown (stderr is no terminal).
    The bar appears once the engine knows the total, and only for a large one; the total comes
    from the engine's own walk of the inputs, so a big tree is not walked twice."""
    if sys.stderr is None or not sys.stderr.isatty():
        yield None
        return
    with ExitStack() as stack:
        yield _TerminalBar(stack)


class _TerminalBar:
    """A bar for a known total over SHOW_ABOVE_BYTES; for an unknown one (stdin), a counter that
    starts once that much has been read, so a short pipe shows nothing."""

    def __init__(self, stack: ExitStack) -> None:
        self._stack = stack
        self._advance: Callable[[int], None] | None = None
        self._uncounted = 0

    def sized(self, total: int | None) -> None:
        if total is None:
            self._advance = self._count_until_large
        elif total >= SHOW_ABOVE_BYTES:
            self._start(total)

    def _count_until_large(self, count: int) -> None:
        self._uncounted += count
        if self._uncounted >= SHOW_ABOVE_BYTES:
            self._start(None)
            self(self._uncounted)

    def _start(self, total: int | None) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )
        from rich.progress import Progress as Bar

        columns = [
            TextColumn("scanning"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
        ]
        console = Console(stderr=True)  # the report owns stdout, even when piped
        bar = self._stack.enter_context(Bar(*columns, transient=True, console=console, redirect_stdout=False))
        task = bar.add_task("scan", total=total)
        self._advance = lambda count: bar.advance(task, count)

    def __call__(self, count: int) -> None:
        if self._advance is not None:
            self._advance(count)
