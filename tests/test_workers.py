"""Worker processes: every task's result comes back once, errors reach the parent, none hangs."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ascend_doctor import engine
from ascend_doctor.errors import AscendDoctorError
from ascend_doctor.read.workers import NoWorkers, RemoteTraceback, WorkerDied, run_tasks
from tests.conftest import FIXTURES, diagnose_json
from tests.processes import children

_started: list[int] = []


def _init(offset: int) -> None:
    _started.append(offset)


def _broken_init(offset: int) -> None:
    raise OSError(f"cannot load the rules ({offset})")


def _square_plus_offset(task: int) -> tuple[int, int, int]:
    return task, task * task + _started[0], os.getpid()


def _fail_on_three(task: int) -> int:
    if task == 3:
        raise ValueError("task three is broken")
    return task


def _killed_on_three(task: int) -> int:
    if task == 3:
        os.kill(os.getpid(), signal.SIGKILL)  # as the kernel's out-of-memory killer would
    return task


class _Unpicklable(Exception):
    def __reduce__(self) -> Any:
        raise TypeError("cannot pickle this error")


def _unpicklable_error(task: int) -> int:
    raise _Unpicklable("the handle is gone")


def _slow(task: int) -> int:
    time.sleep(0.05)
    return task


@pytest.mark.parametrize("processes", [1, 2, 3])
@pytest.mark.parametrize("count", [0, 1, 2, 7, 40])
def test_every_task_gives_one_result_from_a_worker(processes: int, count: int) -> None:
    results = list(run_tasks(_square_plus_offset, list(range(count)), processes, _init, (100,)))
    assert sorted((task, value) for task, value, _pid in results) == [(n, n * n + 100) for n in range(count)]
    assert os.getpid() not in {pid for _task, _value, pid in results}
    assert len({pid for _task, _value, pid in results}) <= processes


def test_an_error_in_a_task_is_raised_in_the_parent_with_where_it_happened() -> None:
    with pytest.raises(ValueError, match="task three is broken") as raised:
        list(run_tasks(_fail_on_three, list(range(6)), 2, _init, (0,)))
    assert isinstance(raised.value.__cause__, RemoteTraceback)
    assert "_fail_on_three" in str(raised.value.__cause__)  # what --debug shows


def test_an_error_starting_a_worker_is_raised_in_the_parent() -> None:
    with pytest.raises(OSError, match=r"cannot load the rules \(7\)"):
        list(run_tasks(_square_plus_offset, list(range(6)), 2, _broken_init, (7,)))


def test_an_error_that_cannot_be_pickled_is_still_reported_as_itself() -> None:
    with pytest.raises(RuntimeError, match="_Unpicklable: the handle is gone"):
        list(run_tasks(_unpicklable_error, [1, 2], 2, _init, (0,)))


@pytest.mark.parametrize("tasks", [6, 20])  # with 20, the killed worker has a task waiting unread
def test_a_killed_worker_is_an_error_not_a_hang(tasks: int) -> None:
    for _ in range(3):
        with pytest.raises(WorkerDied, match="out of memory"):
            list(run_tasks(_killed_on_three, list(range(tasks)), 2, _init, (0,)))
    assert issubclass(WorkerDied, AscendDoctorError)  # said in one line, exit code 2


def test_no_worker_outlives_a_run_left_early() -> None:
    results = run_tasks(_square_plus_offset, list(range(50)), 2, _init, (0,))
    next(results)
    assert len(children(os.getpid())) == 2
    results.close()  # as an error or Ctrl-C in the caller's loop would
    assert children(os.getpid()) == []  # ended and waited for: not even a zombie is left


def _first_quick_then_stuck(task: int) -> int:
    if task:
        time.sleep(600)  # a worker deep in a huge file
    return task


def test_a_run_left_early_does_not_wait_for_busy_workers() -> None:
    results = run_tasks(_first_quick_then_stuck, list(range(4)), 2, _init, (0,))
    assert next(results) == 0
    started = time.monotonic()
    results.close()  # Ctrl-C: the workers are stopped, not waited for
    assert time.monotonic() - started < 10
    assert children(os.getpid()) == []


def _echo(task: str) -> str:
    return task * 2


def test_big_tasks_and_results_do_not_block_each_other() -> None:
    """Beyond a pipe's 64 KiB the parent writing a task and the worker writing a result would wait
    for each other, if tasks were sent through the pipe; workers hold them since the fork."""
    script = f"""
import sys
sys.path.insert(0, {str(Path(__file__).parent.parent)!r})
from tests.test_workers import _echo, _init
from ascend_doctor.read.workers import run_tasks
tasks = [str(n) * 150_000 for n in range(6)]
print(sorted(run_tasks(_echo, tasks, 1, _init, (0,))) == sorted(task * 2 for task in tasks))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "True", done.stderr


def test_a_caller_that_ignores_sigchld_still_gets_its_results() -> None:
    """Children are then reaped by the system: there is nothing left to wait for."""
    previous = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        results = list(run_tasks(_square_plus_offset, list(range(6)), 2, _init, (1,)))
        left_early = run_tasks(_square_plus_offset, list(range(50)), 2, _init, (0,))
        next(left_early)
        left_early.close()
    finally:
        signal.signal(signal.SIGCHLD, previous)
    assert sorted(task for task, _value, _pid in results) == list(range(6))


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def _fork_refused_after(monkeypatch: pytest.MonkeyPatch, allowed: int) -> None:
    """`os.fork` works `allowed` times, then fails as on a box out of memory or processes."""
    real_fork, calls = os.fork, []

    def fork() -> int:
        calls.append(1)
        if len(calls) > allowed:
            raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")
        return real_fork()

    monkeypatch.setattr(os, "fork", fork)


def test_when_no_worker_can_start_the_caller_is_told_and_nothing_leaks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = _open_descriptors()
    _fork_refused_after(monkeypatch, 0)
    with pytest.raises(NoWorkers, match="cannot start worker processes: Resource temporarily unavailable"):
        list(run_tasks(_square_plus_offset, list(range(6)), 2, _init, (0,)))
    assert _open_descriptors() == before


def test_the_workers_that_could_start_do_all_the_work(monkeypatch: pytest.MonkeyPatch) -> None:
    before = _open_descriptors()
    _fork_refused_after(monkeypatch, 1)
    results = list(run_tasks(_square_plus_offset, list(range(9)), 3, _init, (5,)))
    assert sorted((task, value) for task, value, _pid in results) == [(n, n * n + 5) for n in range(9)]
    assert len({pid for _task, _value, pid in results}) == 1
    assert _open_descriptors() == before
    assert children(os.getpid()) == []


def test_a_box_that_refuses_new_processes_is_still_diagnosed(monkeypatch: pytest.MonkeyPatch) -> None:
    paths = [str(FIXTURES / "hccl-8rank-oom")]
    expected, _ = diagnose_json("--jobs", "1", *paths)
    monkeypatch.setattr(engine, "PARALLEL_MIN_BYTES", 0)  # two workers even for a few KB
    _fork_refused_after(monkeypatch, 0)
    report, result = diagnose_json("--jobs", "2", *paths)
    assert report["findings"] == expected["findings"]
    assert report["inputs"] == expected["inputs"]
    assert "cannot start worker processes: Resource temporarily unavailable; scanned in one process" in (
        result.stderr
    )


def test_workers_end_when_the_parent_is_killed(tmp_path: Path) -> None:
    script = f"""
import os, sys
sys.path.insert(0, {str(Path(__file__).parent.parent)!r})
from tests.processes import children
from tests.test_workers import _init, _slow
from ascend_doctor.read.workers import run_tasks
results = run_tasks(_slow, list(range(400)), 2, _init, (0,))
next(results)
print(*children(os.getpid()), flush=True)
os.kill(os.getpid(), 9)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    workers = [int(pid) for pid in done.stdout.split()]
    assert len(workers) == 2
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in workers)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except FileNotFoundError:
        return False
