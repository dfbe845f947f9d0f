"""Worker processes: every task's result comes back once, errors reach the parent, none hangs."""

from __future__ import annotations

import os
import signal

import pytest

from ascend_doctor.errors import AscendDoctorError
from ascend_doctor.workers import WorkerDied, run_tasks

_started: list[int] = []


def _init(offset: int) -> None:
    _started.append(offset)


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


@pytest.mark.parametrize("processes", [1, 2, 3])
@pytest.mark.parametrize("count", [0, 1, 2, 7, 40])
def test_every_task_gives_one_result_from_a_worker(processes: int, count: int) -> None:
    results = list(run_tasks(_square_plus_offset, list(range(count)), processes, _init, (100,)))
    assert sorted((task, value) for task, value, _pid in results) == [(n, n * n + 100) for n in range(count)]
    assert os.getpid() not in {pid for _task, _value, pid in results}
    assert len({pid for _task, _value, pid in results}) <= processes


def test_an_error_in_a_task_is_raised_in_the_parent() -> None:
    with pytest.raises(ValueError, match="task three is broken"):
        list(run_tasks(_fail_on_three, list(range(6)), 2, _init, (0,)))


def test_a_killed_worker_is_an_error_not_a_hang() -> None:
    with pytest.raises(WorkerDied, match="out of memory"):
        list(run_tasks(_killed_on_three, list(range(6)), 2, _init, (0,)))
    assert issubclass(WorkerDied, AscendDoctorError)  # said in one line, exit code 2


def test_no_worker_outlives_a_run_left_early() -> None:
    import multiprocessing

    results = run_tasks(_square_plus_offset, list(range(50)), 2, _init, (0,))
    next(results)
    assert len(multiprocessing.active_children()) == 2
    results.close()  # as an error or Ctrl-C in the caller's loop would
    assert multiprocessing.active_children() == []
