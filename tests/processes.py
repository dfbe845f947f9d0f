"""Run ascend-doctor as a real process and watch it through /proc (Linux): what it has open, whether it
is blocked reading a pipe, which processes of its group are still alive."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

COMMAND = (sys.executable, "-m", "ascend_doctor")
HAS_PROC = os.path.isdir("/proc/self/fd")


def start(args: Sequence[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """`ascend-doctor ARGS` in its own session and process group, as a shell job would be. Ctrl-C
    is reset to its default: under a background job (`cmd &`) the shell leaves SIGINT ignored, and
    every child would inherit that."""
    kwargs.setdefault("stdout", subprocess.PIPE)
    kwargs.setdefault("stderr", subprocess.PIPE)
    return subprocess.Popen([*COMMAND, *args], start_new_session=True, preexec_fn=_default_sigint, **kwargs)


def run_on_terminal(
    args: Sequence[str], terminal: str, env: dict[str, str], stdin: bytes | None = None
) -> tuple[bytes, bytes]:
    """`ascend-doctor ARGS` with its `terminal` stream ("stdout" or "stderr") on a pseudo-terminal,
    read while the process writes so that a full terminal never blocks it: (what the other stream
    carried through a pipe, what the terminal showed)."""
    leader, follower = os.openpty()
    shown = bytearray()

    def drain() -> None:
        while True:
            try:
                data = os.read(leader, 65536)
            except OSError:  # EIO once the process has closed its end
                return
            if not data:
                return
            shown.extend(data)

    reader = threading.Thread(target=drain)
    reader.start()
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, terminal: follower}
    try:
        done = subprocess.run([*COMMAND, *args], input=stdin, env=env, **streams)
    finally:
        os.close(follower)
        reader.join(timeout=30)
        os.close(leader)
    piped = done.stderr if terminal == "stdout" else done.stdout
    return piped, bytes(shown)


def run_watching_import(
    module: str, args: Sequence[str], env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], bool]:
    """`ascend-doctor ARGS` through its console entry point, and whether it imported `module`."""
    probe = (
        "import sys\n"
        "from ascend_doctor.cli.entry import main\n"
        "try:\n"
        "    main()\n"
        "finally:\n"
        f"    sys.stderr.write('{module} imported: %s' % ({module!r} in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, env=env)
    imported = done.stderr.rpartition(f"{module} imported: ")[2]
    assert imported in ("True", "False"), done.stderr
    return done, imported == "True"


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_until(condition: Callable[[], bool], timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return ""


def children(pid: int) -> list[int]:
    return [int(child) for child in _read(f"/proc/{pid}/task/{pid}/children").split()]


def read_position(pid: int, suffix: str) -> int | None:
    """How far process `pid` has read the file whose path ends with `suffix`, None if not open."""
    try:
        descriptors = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return None
    for descriptor in descriptors:
        try:
            if os.readlink(f"/proc/{pid}/fd/{descriptor}").endswith(suffix):
                info = _read(f"/proc/{pid}/fdinfo/{descriptor}").split()
                return int(info[info.index("pos:") + 1]) if "pos:" in info else 0
        except OSError:
            continue
    return None


def has_open(pid: int, suffix: str) -> bool:
    """True when process `pid` holds a file whose path ends with `suffix`."""
    return read_position(pid, suffix) is not None


READ_SYSCALLS = ("0", "63")  # read(2) on x86_64, aarch64


def blocked_on_pipe(pid: int) -> bool:
    """True when the process sleeps in a read of a pipe (its stdin, in these tests)."""
    state = _read(f"/proc/{pid}/stat").rsplit(")", 1)[-1].split()[:1]
    if state != ["S"]:
        return False
    syscall = _read(f"/proc/{pid}/syscall").split()[:2]
    return "pipe" in _read(f"/proc/{pid}/wchan") or syscall in ([nr, "0x0"] for nr in READ_SYSCALLS)


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes whose process group is `pgid`."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fields = _read(f"/proc/{entry}/stat").rsplit(")", 1)[-1].split()
        if len(fields) > 2 and fields[0] not in ("Z", "X") and int(fields[2]) == pgid:
            members.append(int(entry))
    return members
