"""A stand-in for a training job, run as a real child process by the tests of `run` and `--tee`.

Each argument is one step, done in order:
  out:TEXT    print TEXT and a line end on stdout, flushed      err:TEXT  the same on stderr
  raw:HEX     write these bytes to stdout (no line end added)   cat:PATH  copy a file to stdout
  yes:TEXT    print TEXT on stdout for ever (until a write fails)
  gate:PATH   wait until PATH exists (the test opens the gate once it has seen what came before)
  plog:DIR    write a CANN plog with an EL0004 error under DIR/debug/plog/
  spawn:PATH  start a grandchild in the same process group that writes its pid to PATH and sleeps
  trap:SIG    print `caught SIG` on stderr when SIG arrives, then exit 3
  exit:N      exit with status N                                kill:SIG  die of signal SIG
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

PLOG_LINE = (
    "[ERROR] RUNTIME(4242,python):2024-12-04-10:05:31.123.456 [npu_mem.cc:120]4242 "
    "MallocMemory: EL0004: Failed to allocate memory.\n"
)


def _gate(path: str) -> None:
    deadline = time.monotonic() + 60  # a test that never opens the gate fails, it does not hang
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.01)


def _plog(directory: str) -> None:
    folder = os.path.join(directory, "debug", "plog")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"plog-{os.getpid()}_20241204100531123.log"), "w") as handle:
        handle.write(PLOG_LINE)


def _spawn(path: str) -> None:
    code = f"import os,time; open({path!r},'w').write(str(os.getpid())); time.sleep(120)"
    subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _trap(name: str) -> None:
    def caught(signum: int, _frame: object) -> None:
        sys.stderr.write(f"caught {signal.Signals(signum).name}\n")
        sys.stderr.flush()
        os._exit(3)

    signal.signal(getattr(signal, name), caught)


def main(steps: list[str]) -> None:
    for step in steps:
        verb, _, value = step.partition(":")
        if verb in ("out", "err"):
            stream = sys.stdout if verb == "out" else sys.stderr
            stream.write(value + "\n")
            stream.flush()
        elif verb == "raw":
            os.write(1, bytes.fromhex(value))
        elif verb == "cat":
            with open(value, "rb") as handle:
                while chunk := handle.read(65536):
                    sys.stdout.buffer.write(chunk)
            sys.stdout.flush()
        elif verb == "yes":
            while True:
                os.write(1, value.encode() + b"\n")
        elif verb == "gate":
            _gate(value)
        elif verb == "plog":
            _plog(value)
        elif verb == "spawn":
            _spawn(value)
        elif verb == "trap":
            _trap(value)
        elif verb == "exit":
            sys.exit(int(value))
        elif verb == "kill":
            os.kill(os.getpid(), getattr(signal, value))
            time.sleep(60)
        else:
            raise SystemExit(f"fake_job: unknown step {step!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
