"""Benchmark `merge` on a big job's rank reports: `python bench/merge.py [--ranks 4096]`.

Generates (once, under bench/data/merge-<ranks>/) a job of --ranks ranks, one log per rank, with the
generator of the merge tests (tests/cluster/cluster_logs.py: one rank runs out of memory, the others
time out waiting for it), diagnoses it, and writes one schema 2 report per rank, as a node that holds
one rank would: each report is that rank's matches ranked on their own (a rank's scan does not depend
on the other ranks', so the one scan of all logs is split, not repeated 4,096 times).

Then, in a child process pinned to one core, it times `merge` of the report directory (reading and
ranking, best of --repeat) and the whole command `ascend-doctor merge DIR -f json -o /dev/null`, and
prints the peak RSS of each. Not a test: the numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from ascend_doctor.engine import ScanOptions, diagnose  # noqa: E402
from ascend_doctor.model import Report  # noqa: E402
from ascend_doctor.ranking import earlier_runs, rank, waited_for  # noqa: E402
from ascend_doctor.render.json import dumps, report_dict  # noqa: E402
from ascend_doctor.rulebase.load import load_rulebase  # noqa: E402
from tests.cluster.cluster_logs import make_job  # noqa: E402

CHILD = """
import resource, sys, time
from ascend_doctor.cluster.merge import merge
wall, cpu = [], []
for _ in range(int(sys.argv[2])):
    start, used = time.perf_counter(), time.process_time()
    merge([sys.argv[1]])
    wall.append(time.perf_counter() - start)
    cpu.append(time.process_time() - used)
print(min(wall), min(cpu), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def rank_report(whole: Report, index: int, rules: tuple, node: str) -> Report:
    """The report a node holding only input `index` would write."""
    matches = [m._replace(input_index=0) for m in whole.matches if m.input_index == index]
    fired = {m.rule_id for m in matches}
    mine = tuple(rule for rule in rules if rule.id in fired)
    peer = waited_for(matches, mine)
    return whole._replace(
        findings=rank(matches, mine, peer, earlier_runs(matches, mine)),
        inputs=(whole.inputs[index],),
        warnings=(),
        waited_for=peer,
        matches=tuple(matches),
        rules=mine,
        node=node,
    )


def generate(ranks: int, out: Path) -> Path:
    reports = out / "reports"
    if reports.is_dir() and len(list(reports.glob("*.json"))) == ranks:
        return reports
    job = make_job(out / "logs", ranks, ranks, "oom", seed=ranks)
    rulebase = load_rulebase(())
    paths = [str(job.root / node) for node in job.nodes]
    whole = diagnose(paths, rulebase, ScanOptions(jobs=os.cpu_count() or 1))
    reports.mkdir(parents=True, exist_ok=True)
    for index, node in enumerate(job.nodes):
        document = report_dict(rank_report(whole, index, rulebase.rules, node))
        (reports / f"{node}.json").write_text(dumps(document), encoding="utf-8")
    return reports


def one_core() -> dict[str, object]:
    return {"preexec_fn": lambda: os.sched_setaffinity(0, {0})} if hasattr(os, "sched_setaffinity") else {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=4096)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    reports = generate(args.ranks, HERE / "data" / f"merge-{args.ranks}")
    size = sum(path.stat().st_size for path in reports.glob("*.json"))
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    child = [sys.executable, "-c", CHILD, str(reports), str(args.repeat)]
    done = subprocess.run(child, env=env, capture_output=True, text=True, check=True, **one_core())
    wall, cpu, rss = (float(value) for value in done.stdout.split())
    command = [sys.executable, "-m", "ascend_doctor", "merge", str(reports), "-f", "json", "-o", os.devnull]
    start = time.perf_counter()
    subprocess.run(command, env=env, check=False, stdout=subprocess.DEVNULL, **one_core())  # 1: a cause found
    elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # the largest child's
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{args.ranks} rank reports, {size / 1e6:.1f} MB of JSON, one core, load average {load:.1f}:")
    print(
        f"  merge (read + rank), best of {args.repeat}: {wall:.3f} s wall, {cpu:.3f} s CPU; "
        f"peak RSS {rss:.0f} MB"
    )
    print(f"  `ascend-doctor merge DIR -f json -o /dev/null`: {elapsed:.3f} s wall; peak RSS {peak:.0f} MB")


if __name__ == "__main__":
    main()
