"""Benchmark ascend-doctor against `rg` and `grep` on generated logs: `python bench/run.py`.

Generates (once) under bench/data/: a 100 MB training log (1 GB more with --big), a file that is
one 100 MB line, and a plog directory, with shared/bench/gen_logs.py (or --gen PATH). Exports the
loaded rule base's own regexes for rg and grep (bench/patterns.py says how), then times, on the
same files in the same run, `rg -c -f`, `LC_ALL=C grep -c -E -f` and `ascend-doctor diagnose`
with each engine, on one core and on all of them. Prints a Markdown table with both engines side
by side (MB/s, the ratio to rg and grep, peak RSS), then the start-up against `python -c pass`.
Throughput is by wall-clock time, best of --repeat rounds that run rg, grep and ascend-doctor in turn
(a slow minute of a shared machine weighs on all alike); peak RSS is the largest process's.
Inputs that several processes can share (a directory, a file big enough to scan in parts) are also
timed with --jobs N (all cores, or --jobs), against `rg -j N`.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import patterns  # noqa: E402

from ascend_doctor.match import parts  # noqa: E402
from ascend_doctor.match.prefilter import hyperscan_available  # noqa: E402
from ascend_doctor.rulebase.load import load_rulebase  # noqa: E402

DATA = HERE / "data"
DEFAULT_GEN = HERE.parent.parent / "shared" / "bench" / "gen_logs.py"
MB = 1024 * 1024


@dataclass
class Timing:
    seconds: float
    peak_mb: float


def run(command: list[str], env: dict[str, str] | None = None) -> Timing:
    """Wall time and peak RSS (of the process and the children it waited for) of one run.
    Python may write bytecode, as after `pip install` (a sandbox may set PYTHONDONTWRITEBYTECODE)."""
    env = {key: value for key, value in (env or os.environ).items() if key != "PYTHONDONTWRITEBYTECODE"}
    started = time.perf_counter()
    # A pipe, not /dev/null: GNU grep stops at the first match when its output is /dev/null.
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert process.stdout is not None
    while process.stdout.read(1 << 16):
        pass
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):
        raise SystemExit(f"failed ({process.returncode}): {' '.join(command)}")
    return Timing(elapsed, usage.ru_maxrss / 1024)


def best_interleaved(commands: list[tuple[list[str], dict[str, str] | None]], repeat: int) -> list[Timing]:
    """Each command's best time (and largest peak RSS) of `repeat` rounds that run every command
    once: a slow minute of a shared machine then weighs on rg, grep and ascend-doctor alike."""
    runs: list[list[Timing]] = [[] for _ in commands]
    for _ in range(repeat):
        for timings, (command, env) in zip(runs, commands):
            timings.append(run(command, env))
    return [Timing(min(t.seconds for t in each), max(t.peak_mb for t in each)) for each in runs]


def size_of(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def generate(gen: Path, big: bool, plog_mb: int, plog_files: int) -> dict[str, Path]:
    DATA.mkdir(exist_ok=True)
    inputs = {"100 MB log": DATA / "train-100mb.log"}
    if big:
        inputs["1 GB log"] = DATA / "train-1gb.log"
    for name, path in inputs.items():
        if not path.exists():
            size = "1024" if name.startswith("1 GB") else "100"
            _gen(gen, ["stdout", str(path), size])
    one_line = DATA / "one-line-100mb.log"
    if not one_line.exists():
        write_one_line(one_line)
    inputs["one 100 MB line"] = one_line
    plog = DATA / f"plog-{plog_mb}mb-{plog_files}"
    if not plog.exists():
        _gen(gen, ["plogdir", str(plog), str(plog_mb), "--files", str(plog_files)])
    inputs[f"plog dir {plog_mb} MB, {plog_files} files"] = plog
    return inputs


def _gen(gen: Path, args: list[str]) -> None:
    if not gen.is_file():
        raise SystemExit(f"log generator not found: {gen} (pass --gen PATH to gen_logs.py)")
    print(f"generating {args[1]} ...", file=sys.stderr)
    subprocess.run([sys.executable, str(gen), *args], check=True)


def write_one_line(path: Path) -> None:
    """100 MiB without a newline but at its end, two incidents inside."""
    block = b"abc def 0.1234, " * (MB // 16)
    with path.open("wb") as handle:
        for index in range(100):
            handle.write(block)
            if index in (30, 70):
                handle.write(b" EL0004: Failed to allocate memory. ")
        handle.write(b"\n")


def export_patterns() -> dict[str, Path]:
    rules = load_rulebase().rules
    files = {}
    for dialect in ("rust", "ere"):
        exported = patterns.export(patterns.rule_patterns(rules), dialect)
        path = DATA / f"patterns.{dialect}"
        path.write_text("\n".join(exported.patterns) + "\n", encoding="utf-8")
        files[dialect] = path
        print(
            f"{dialect}: {exported.total} patterns, {len(exported.patterns)} exported "
            f"({exported.changed} widened: lookarounds dropped), {len(exported.skipped)} skipped",
            file=sys.stderr,
        )
    return files


# What the `ascend-doctor` console script runs (`python -m` would add runpy's imports).
ENTRY = [sys.executable, "-c", "from ascend_doctor.cli.entry import main; main()"]


def doctor(path: Path, engine: str, jobs: int) -> list[str]:
    return [
        *ENTRY, "diagnose", str(path), "--engine", engine,
        "--jobs", str(jobs), "--format", "json", "--output", os.devnull, "--exit-zero",
    ]  # fmt: skip


def baselines(path: Path, pats: dict[str, Path], jobs: int) -> list[tuple[list[str], dict[str, str] | None]]:
    """rg (with `jobs` threads) and grep, each with its environment."""
    rg = ["rg", "-c", "--no-messages", "-j", str(jobs), "-f", str(pats["rust"]), str(path)]
    grep = ["grep", "-c", "-E", "-f", str(pats["ere"]), *(["-r"] if path.is_dir() else []), str(path)]
    return [(rg, None), (grep, {**os.environ, "LC_ALL": "C"})]


def startup(repeat: int) -> dict[str, tuple[float, float]]:
    """(best, median) milliseconds to diagnose a 10-line log with the rule cache warm: as typed
    most often (`ascend-doctor LOG`), as a CI step types it (a SARIF report to a file, exit 0),
    and the bare interpreter. The three are interleaved, so a slow minute of a shared machine
    weighs on each alike."""
    small = DATA / "ten-lines.log"
    lines = [f"step {i}: loss 2.{i}" for i in range(9)] + ["EL0004: Failed to allocate memory"]
    small.write_text("\n".join(lines) + "\n")
    plain = [*ENTRY, str(small)]
    ci_step = ["--format", "sarif", "-o", os.devnull, "--exit-zero"]
    commands = {
        "ascend-doctor LOG": plain,
        "with --format sarif -o FILE --exit-zero": plain + ci_step,
        "python -c pass": [sys.executable, "-c", "pass"],
    }
    env = {key: value for key, value in os.environ.items() if not key.startswith("ASCEND_DOCTOR_")}
    run(plain, env)  # warm the rule cache
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(max(repeat, 20)):
        for name, command in commands.items():
            times[name].append(run(command, env).seconds * 1000)
    return {name: (min(values), statistics.median(values)) for name, values in times.items()}


def splits(path: Path, workers: int) -> bool:
    """Whether more processes have work: a directory, or a file big enough to scan in parts."""
    return path.is_dir() or len(parts.plan(str(path), path.stat().st_size, workers=workers)) > 1


@dataclass
class Row:
    """One input at one number of jobs: rg, grep and each engine, timed in the same rounds."""

    name: str
    size_mb: float
    jobs: int
    rg: Timing
    grep: Timing
    engines: dict[str, Timing]


def measure(inputs: dict[str, Path], engines: list[str], repeat: int, cores: int) -> list[Row]:
    """Every input on one core and on all of them (`rg -j`, `--jobs`); rounds of rg, grep and
    each engine in turn, so that all of one row met the same minutes of a shared machine."""
    pats = export_patterns()
    rows = []
    for name, path in inputs.items():
        size = size_of(path) / MB
        for jobs in sorted({1, cores}):
            if jobs > 1 and not splits(path, jobs):
                continue  # one process does all the work: the same run as jobs=1
            ours = [(doctor(path, engine, jobs), None) for engine in engines]
            rg, grep, *timings = best_interleaved(baselines(path, pats, jobs) + ours, repeat)
            for engine, timing in zip(engines, timings):
                done = f"{timing.seconds:.2f} s (rg {rg.seconds:.2f} s)"
                print(f"{name} {engine} jobs={jobs}: {done}", file=sys.stderr)
            rows.append(Row(name, size, jobs, rg, grep, dict(zip(engines, timings))))
    return rows


def table(rows: list[Row], engines: list[str]) -> str:
    """Both engines side by side with rg and grep: MB/s, x rg, x grep, peak RSS."""
    head = ["input", "jobs", "rg MB/s", "grep MB/s"]
    for engine in engines:
        head += [f"{engine} MB/s", "× rg", "× grep"]
    head += [f"peak RSS MB ({', '.join(['rg', 'grep', *engines])})"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        cells = [row.name, str(row.jobs), _rate(row.size_mb, row.rg), _rate(row.size_mb, row.grep)]
        for engine in engines:
            timing = row.engines[engine]
            cells += [
                _rate(row.size_mb, timing),
                f"{row.rg.seconds / timing.seconds:.2f}",
                f"{row.grep.seconds / timing.seconds:.2f}",
            ]
        peaks = [row.rg, row.grep, *(row.engines[engine] for engine in engines)]
        cells.append(" / ".join(f"{timing.peak_mb:.0f}" for timing in peaks))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _rate(size_mb: float, timing: Timing) -> str:
    return f"{size_mb / timing.seconds:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gen", type=Path, default=DEFAULT_GEN, help="path to gen_logs.py")
    parser.add_argument("--big", action="store_true", help="also a 1 GB log")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (best is kept)")
    parser.add_argument("--plog-mb", type=int, default=1000)
    parser.add_argument("--plog-files", type=int, default=5000)
    parser.add_argument("--engine", action="append", choices=["python", "hyperscan"], help="default: both")
    parser.add_argument("--jobs", type=int, help="'all cores' (default: os.cpu_count())")
    args = parser.parse_args()
    for tool in ("rg", "grep"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is not installed (apt-get install ripgrep grep)")
    engines = args.engine or (["python", "hyperscan"] if hyperscan_available() else ["python"])
    inputs = generate(args.gen, args.big, args.plog_mb, args.plog_files)
    cores = args.jobs or os.cpu_count() or 1
    rows = measure(inputs, engines, args.repeat, cores)
    cpu = f"{os.cpu_count()} cores, {platform.processor() or platform.machine()}"
    starts = startup(args.repeat)
    print(f"\n{time.strftime('%Y-%m-%d')}, Python {platform.python_version()}, {cpu}\n")
    print(table(rows, engines))
    runs = max(args.repeat, 20)
    bare = starts["python -c pass"][1]
    print(f"\nStart-up, diagnosing a 10-line log (rule cache warm, {runs} interleaved runs):\n")
    print("| command | best ms | median ms | median × `python -c pass` |\n|---|---|---|---|")
    for name, (fastest, middle) in starts.items():
        print(f"| `{name}` | {fastest:.0f} | {middle:.0f} | {middle / bare:.1f} |")


if __name__ == "__main__":
    main()
