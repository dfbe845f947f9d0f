"""Progress on stderr while a large input is read, only when stderr is a terminal."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Callable

SHOW_ABOVE_BYTES = 32 * 1024 * 1024


@contextmanager
def byte_progress(size_of: Callable[[], int | None], enabled: bool) -> Iterator[Callable[[int], None] | None]:
    """Yields a callback taking the number of bytes just read, or None when nothing is shown.

    `size_of` (the total to read, None if unknown) is only called when a bar could be shown:
    sizing a large directory costs a walk of the whole tree.
    """
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    total = size_of()
    if total is not None and total < SHOW_ABOVE_BYTES:
        yield None
        return
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    columns = [
        TextColumn("scanning"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
    ]
    with Progress(*columns, transient=True, console=None, redirect_stdout=False) as progress:
        task = progress.add_task("scan", total=total)

        def advance(count: int) -> None:
            progress.advance(task, count)

        yield advance
