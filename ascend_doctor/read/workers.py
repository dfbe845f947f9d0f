"""Forked worker processes that run tasks and send back their results, in the order they finish.

Not `multiprocessing`: importing it takes ~30 ms, a tenth of a 100 MB log's scan on two cores, and
its Pool's worker-handler thread spins while a result waits in its pipe (on a 5,000-file plog tree
that cost the parent ~0.15 s of CPU, taken from the workers on a two-core machine). Here each worker
is forked with the parent's loaded state, the tasks included: over its own pipe it is only told
which task to run next (a few bytes, so the parent never blocks sending while a worker blocks
sending a big result), and it sends each result over another; the parent sleeps in `poll` until
one arrives.
Needs `os.fork` (Linux, macOS): the engine runs one process where there is none.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import suppress
from typing import Any, Callable, NamedTuple

from ascend_doctor.errors import AscendDoctorError

# Tasks a worker may hold: the next one waits in its pipe, so it does not wait for the parent
# between two. Only while every worker can still get one: the last tasks go to whichever worker
# is free first, so that no worker is left with a queued task while another is idle.
IN_FLIGHT = 2
_HEADER = 8  # bytes of a message's length, before the pickle


class WorkerDied(AscendDoctorError):
    """A worker process ended without a result (killed, or out of memory)."""

    def __init__(self) -> None:
        super().__init__("a worker process ended before it was done (killed? out of memory?); try --jobs 1")


class NoWorkers(AscendDoctorError):
    """Not one worker process could be started (out of memory, or of processes or files)."""

    def __init__(self, exc: OSError) -> None:
        super().__init__(f"cannot start worker processes: {exc.strerror or exc}")


class RemoteTraceback(Exception):
    """Where a task failed in its worker: the cause of the error raised again in the parent."""

    def __str__(self) -> str:
        return f'\n"""\n{self.args[0]}"""'


class _Worker(NamedTuple):
    pid: int
    tasks: int  # the parent's end of the pipe the worker reads the numbers of its tasks from
    results: int  # the parent's end of the pipe the worker writes its results to


def run_tasks(
    function: Callable[[Any], Any],
    tasks: Sequence[Any],
    processes: int,
    initializer: Callable[..., None],
    initargs: tuple[Any, ...],
) -> Iterator[Any]:
    """`function(task)` for every task, in worker processes started with `initializer(*initargs)`.
    An exception raised by `function` is raised here. Workers end with the iterator, at once if it
    is left early (an error, Ctrl-C). When the system refuses more processes, the workers started
    so far do the work; NoWorkers when there is none."""
    pending = deque(range(len(tasks)))
    started: list[_Worker] = []
    finished = False
    try:
        for _ in range(processes):
            try:
                started.append(_start(started, function, tasks, initializer, initargs))
            except OSError as exc:
                if not started:
                    raise NoWorkers(exc) from exc
                break
        held = {worker.results: 0 for worker in started}
        by_results = {worker.results: worker for worker in started}
        for _ in range(IN_FLIGHT):
            for worker in started:
                _dispatch(worker, pending, held)
        while any(held.values()):
            for fd in _ready([fd for fd, count in held.items() if count]):
                succeeded, value, where = _receive(fd)
                if not succeeded:
                    raise value from RemoteTraceback(where)
                held[fd] -= 1
                _dispatch(by_results[fd], pending, held)
                yield value
        finished = True
    finally:
        _stop(started, finished)


def _start(
    started: list[_Worker],
    function: Callable[[Any], Any],
    tasks: Sequence[Any],
    initializer: Callable[..., None],
    initargs: tuple[Any, ...],
) -> _Worker:
    made: list[int] = []
    try:
        made += os.pipe()
        made += os.pipe()
        pid = os.fork()
    except OSError:
        for fd in made:
            os.close(fd)
        raise
    task_read, task_write, result_read, result_write = made
    if pid:
        os.close(task_read)
        os.close(result_write)
        return _Worker(pid, task_write, result_read)
    code = 1
    try:
        # The parent's ends of this worker's pipes and of the workers' before it: a worker that
        # held them would never see the parent die (its task pipe would never reach its end).
        for fd in (task_write, result_read):
            os.close(fd)
        for worker in started:
            os.close(worker.tasks)
            os.close(worker.results)
        _serve(task_read, result_write, function, tasks, initializer, initargs)
        code = 0
    finally:
        os._exit(code)  # never return into the parent's code, its `finally` blocks and exit handlers


def _dispatch(worker: _Worker, pending: deque[int], held: dict[int, int]) -> None:
    """Send the worker the number of the next task, if it holds none, or fewer than IN_FLIGHT
    while there are tasks enough for every worker."""
    count = held[worker.results]
    if pending and (count == 0 or (count < IN_FLIGHT and len(pending) >= len(held))):
        try:
            _send(worker.tasks, pending.popleft())
        except OSError:  # it died after sending its last result
            raise WorkerDied from None
        held[worker.results] = count + 1


def _ready(fds: list[int]) -> list[int]:
    """The pipes among `fds` with a result to read or whose worker is gone (`poll`, not `select`:
    a parent started with a thousand open files gets pipe numbers `select` cannot take)."""
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    return [fd for fd, _event in poller.poll()]


def _stop(started: list[_Worker], finished: bool) -> None:
    """Tell idle workers to end; a run left early ends them at once instead. A worker may already
    be gone, and reaped by the system when the caller ignores SIGCHLD."""
    for worker in started:
        if not (finished and _asked_to_end(worker)):
            with suppress(ProcessLookupError):
                os.kill(worker.pid, signal.SIGTERM)
        os.close(worker.tasks)
        os.close(worker.results)
    for worker in started:
        with suppress(ChildProcessError):
            os.waitpid(worker.pid, 0)


def _asked_to_end(worker: _Worker) -> bool:
    try:
        _send(worker.tasks, None)
    except OSError:
        return False
    return True


def _serve(
    orders: int,
    results: int,
    function: Callable[[Any], Any],
    tasks: Sequence[Any],
    initializer: Callable[..., None],
    initargs: tuple[Any, ...],
) -> None:
    broken = None
    try:
        initializer(*initargs)
    except Exception as exc:  # every task fails with it, so the parent raises it (not WorkerDied)
        broken = _failure(exc)
    while True:
        try:
            number = _receive(orders)
        except (WorkerDied, OSError):  # the parent is gone
            return
        if number is None:
            return
        try:
            result = broken or (True, function(tasks[number]), "")
        except Exception as exc:  # raised again in the parent, as the caller's own error
            result = _failure(exc)
        try:
            _send(results, result)
        except OSError:  # the parent is gone
            return


def _failure(exc: Exception) -> tuple[bool, Exception, str]:
    """The error and its traceback as they can be sent: an error that cannot be pickled is sent
    as its text (it would otherwise look like a worker that died)."""
    import traceback

    where = traceback.format_exc()
    try:
        pickle.dumps(exc)
    except Exception:
        return False, RuntimeError(f"{type(exc).__name__}: {exc}"), where
    return False, exc, where


def _send(fd: int, message: Any) -> None:
    data = pickle.dumps(message, pickle.HIGHEST_PROTOCOL)
    view = memoryview(len(data).to_bytes(_HEADER, "little") + data)
    while view:
        view = view[os.write(fd, view) :]


def _receive(fd: int) -> Any:
    """The next message on `fd`; WorkerDied when the other end closed before a whole one."""
    size = int.from_bytes(_read_exactly(fd, _HEADER), "little")
    return pickle.loads(_read_exactly(fd, size))


def _read_exactly(fd: int, size: int) -> bytearray:
    data = bytearray(size)
    view = memoryview(data)
    done = 0
    while done < size:
        count = os.readv(fd, [view[done:]])
        if not count:
            raise WorkerDied
        done += count
    return data
