"""Worker processes that run tasks and send back their results, in the order they finish.

Not `multiprocessing.Pool`: its worker-handler thread waits on the result pipe too, and spins
while a result waits there to be read. On a 5,000-file plog tree that cost the parent ~0.15 s of
CPU, taken from the workers on a two-core machine. Here the parent's one thread sends each worker
its tasks over the worker's own pipe and sleeps until a result arrives.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any, Callable

from ascend_doctor.errors import AscendDoctorError

# Tasks a worker may hold: the next one waits in its pipe, so it does not wait for the parent
# between two. Only while every worker can still get one: the last tasks go to whichever worker
# is free first, so that no worker is left with a queued task while another is idle.
IN_FLIGHT = 2


class WorkerDied(AscendDoctorError):
    """A worker process ended without a result (killed, or out of memory)."""

    def __init__(self) -> None:
        super().__init__("a worker process ended before it was done (killed? out of memory?); try --jobs 1")


class RemoteTraceback(Exception):
    """Where a task failed in its worker: the cause of the error raised again in the parent."""

    def __str__(self) -> str:
        return f'\n"""\n{self.args[0]}"""'


def run_tasks(
    function: Callable[[Any], Any],
    tasks: Sequence[Any],
    processes: int,
    initializer: Callable[..., None],
    initargs: tuple[Any, ...],
) -> Iterator[Any]:
    """`function(task)` for every task, in worker processes started with `initializer(*initargs)`.
    An exception raised by `function` is raised here. Workers end with the iterator, at once if it
    is left early (an error, Ctrl-C)."""
    import multiprocessing  # only here: importing it costs every run ~10 ms of start-up
    from multiprocessing.connection import wait

    context = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    pending = deque(tasks)
    started: list[tuple[Any, Any]] = []
    finished = False
    try:
        for _ in range(processes):
            ours, theirs = context.Pipe()
            # A forked worker also holds the parent's ends of its own pipe and of the pipes made
            # before it; it closes them, or it would never see the parent die.
            inherited = [ours, *(conn for conn, _worker in started)]
            arguments = (theirs, inherited, function, initializer, initargs)
            worker = context.Process(target=_serve, args=arguments, daemon=True)
            worker.start()
            theirs.close()
            started.append((ours, worker))
        held = {ours: 0 for ours, _worker in started}
        for _ in range(IN_FLIGHT):
            for ours in held:
                _dispatch(ours, pending, held)
        while any(held.values()):
            for ours in wait([conn for conn, count in held.items() if count]):
                try:
                    succeeded, value, where = ours.recv()
                except (EOFError, OSError):  # OSError: it died with a task still unread
                    raise WorkerDied from None
                if not succeeded:
                    raise value from RemoteTraceback(where)
                held[ours] -= 1
                _dispatch(ours, pending, held)
                yield value
        finished = True
    finally:
        _stop(started, finished)


def _dispatch(ours: Any, pending: deque[Any], held: dict[Any, int]) -> None:
    """Send the worker the next task, if it holds none, or fewer than IN_FLIGHT while there are
    tasks enough for every worker."""
    if pending and (held[ours] == 0 or (held[ours] < IN_FLIGHT and len(pending) >= len(held))):
        try:
            ours.send(pending.popleft())
        except OSError:  # it died after sending its last result
            raise WorkerDied from None
        held[ours] += 1


def _stop(started: list[tuple[Any, Any]], finished: bool) -> None:
    """Tell idle workers to end; a run left early ends them at once instead."""
    for ours, worker in started:
        if finished:
            try:
                ours.send(None)
            except OSError:
                worker.terminate()
        else:
            worker.terminate()
        ours.close()
    for _ours, worker in started:
        worker.join()


def _serve(
    theirs: Any,
    inherited: list[Any],
    function: Callable[[Any], Any],
    initializer: Callable[..., None],
    initargs: tuple[Any, ...],
) -> None:
    for conn in inherited:
        conn.close()
    broken = None
    try:
        initializer(*initargs)
    except Exception as exc:  # every task fails with it, so the parent raises it (not WorkerDied)
        broken = _failure(exc)
    while True:
        try:
            task = theirs.recv()
        except (EOFError, OSError):  # the parent is gone
            return
        if task is None:
            return
        try:
            result = broken or (True, function(task), "")
        except Exception as exc:  # raised again in the parent, as the caller's own error
            result = _failure(exc)
        try:
            theirs.send(result)
        except OSError:  # the parent is gone
            return


def _failure(exc: Exception) -> tuple[bool, Exception, str]:
    """The error and its traceback as they can be sent: an error that cannot be pickled is sent
    as its text (it would otherwise look like a worker that died)."""
    import pickle
    import traceback

    where = traceback.format_exc()
    try:
        pickle.dumps(exc)
    except Exception:
        return False, RuntimeError(f"{type(exc).__name__}: {exc}"), where
    return False, exc, where
