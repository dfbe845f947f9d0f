"""`ascend-doctor run` on a job that prints a lot: `python bench/run_stream.py [--size-mb 1024 ...]`.

A generated job writes training-log lines (steps, warnings, tqdm bars on stderr) and, at the
end, the failure of fixtures/example-train.log, SIZE MB in all, as fast as it can. The bench runs
`ascend-doctor run -- JOB` with its output passed through to /dev/null and prints, per size: the
wall time, MB/s, the peak RSS of the ascend-doctor process alone (measured inside it, so the job's
own memory is not counted), and the first finding. RSS that stays flat from the smallest size to
the largest is the point: the output is scanned as it streams, never held.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
MB = 1024 * 1024

JOB = r"""
import os, sys
size = int(sys.argv[1]) * 1024 * 1024
failure = open(sys.argv[2], "rb").read()
lines = []
for step in range(4000):
    lines.append(b"[2024-12-04 10:%02d:%02d] [rank%d] step %d loss %.4f lr 3.0e-4 tokens/s 51234\n"
                 % (step // 60 % 60, step % 60, step % 8, step, 2.5 / (1 + step / 1000)))
    if step % 500 == 0:
        lines.append(b"[W compiler_depend.ts:1] Warning: The oprator of MaskedFill is executed on CPU\n")
chunk = b"".join(lines)
bar = b"\r 42%|####      | 420/1000 [00:10<00:14, 41.2it/s]" * 20
written = 0
while written + len(chunk) < size - len(failure):
    os.write(1, chunk)
    os.write(2, bar)
    written += len(chunk) + len(bar)
os.write(2, b"\n")
os.write(1, failure)
sys.exit(1)
"""

PROBE = r"""
import resource, sys
from ascend_doctor.cli.app import main
try:
    main(sys.argv[2:])
finally:
    with open(sys.argv[1], "w") as handle:
        handle.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
"""


def measure(size_mb: int, engine: str) -> tuple[float, float, str, int]:
    """(seconds, peak RSS in MB of ascend-doctor, the report's first lines, the exit status)."""
    with tempfile.TemporaryDirectory() as scratch:
        rss_file = os.path.join(scratch, "rss")
        job = [sys.executable, "-c", JOB, str(size_mb), str(REPO / "fixtures" / "example-train.log")]
        command = [sys.executable, "-c", PROBE, rss_file, "run", "--no-plogs", "--engine", engine, "--", *job]
        env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
        started = time.perf_counter()
        with open(os.devnull, "wb") as sink:
            done = subprocess.run(command, stdout=sink, stderr=subprocess.PIPE, env=env, check=False)
        elapsed = time.perf_counter() - started
        with open(rss_file) as handle:
            peak_mb = int(handle.read()) / 1024
    lines = done.stderr.decode(errors="replace").splitlines()
    report = [line for line in lines if line.startswith("Diagnosis")]
    return elapsed, peak_mb, report[0][:90] if report else "(no report)", done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size-mb", type=int, nargs="+", default=[10, 100, 1024])
    parser.add_argument("--engine", default="auto", choices=("auto", "python", "hyperscan"))
    args = parser.parse_args()
    print("| output | engine | seconds | MB/s | peak RSS MB | exit | report |")
    print("|---|---|---|---|---|---|---|")
    for size in args.size_mb:
        seconds, peak, report, status = measure(size, args.engine)
        cells = (
            f"{size} MB",
            args.engine,
            f"{seconds:.1f}",
            f"{size / seconds:.0f}",
            f"{peak:.0f}",
            status,
            report,
        )
        print("| " + " | ".join(map(str, cells)) + " |")


if __name__ == "__main__":
    main()
