"""The command `run` watches: started in a process group of its own, signals passed on to that
group, its exit told the way a shell tells it."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any

from ascend_doctor.errors import CommandError, ExitCode

# Ctrl-C, `kill`, and a closed terminal: the job would have had each of them had it run alone.
# Its own session has no terminal to send it SIGHUP, so that one is passed on too.
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def start(command: Sequence[str]) -> subprocess.Popen[bytes]:
    """Start `command` with its stdout and stderr on pipes and stdin shared, in a new session: its
    process group is ours to signal (torchrun's workers with it), and a terminal on stdin is still
    readable by it. Not found or not executable: a CommandError with the shell's exit code."""
    try:
        return subprocess.Popen(
            list(command), stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0, start_new_session=True
        )
    except FileNotFoundError:
        raise CommandError(f"{command[0]}: command not found", ExitCode.COMMAND_NOT_FOUND) from None
    except PermissionError:
        raise CommandError(f"{command[0]}: permission denied", ExitCode.COMMAND_NOT_EXECUTABLE) from None
    except OSError as exc:
        code = ExitCode.COMMAND_NOT_FOUND if exc.errno == errno.ENOENT else ExitCode.COMMAND_NOT_EXECUTABLE
        raise CommandError(f"{command[0]}: cannot run it: {exc.strerror or exc}", code) from None


@contextmanager
def watched(command: Sequence[str]) -> Iterator[tuple[subprocess.Popen[bytes], list[int]]]:
    """The started command, and the FORWARDED signals received so far. While inside, those signals
    go to the command's process group instead of ending us: we read on until it ends, so the report
    covers what it printed while dying. One that came while it was being started follows it; one
    that comes once it has ended (its plogs being read) interrupts us."""
    received: list[int] = []
    started: list[subprocess.Popen[bytes]] = []

    def forward(signum: int, _frame: Any) -> None:
        received.append(signum)
        if started and started[0].returncode is not None:
            raise KeyboardInterrupt
        if started:
            _signal_group(started[0].pid, signum)

    previous = {number: signal.signal(number, forward) for number in FORWARDED}
    try:
        started.append(start(command))
        for signum in received:
            _signal_group(started[0].pid, signum)
        yield started[0], received
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _signal_group(pid: int, signum: int) -> None:
    with suppress(ProcessLookupError, PermissionError):  # the group has ended already
        os.killpg(pid, signum)


def exit_status(returncode: int) -> int:
    """A shell's `$?`: the exit code, or 128 + N for a death by signal N."""
    return 128 - returncode if returncode < 0 else returncode


def how_it_ended(returncode: int) -> str:
    """`exited with 1`, `was killed by SIGKILL (exit 137)`."""
    if returncode >= 0:
        return f"exited with {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    return f"was killed by {name} (exit {exit_status(returncode)})"
