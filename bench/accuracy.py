"""Score ascend-doctor on labelled real logs: `python bench/accuracy.py DIR [--json] [--jobs N]`.

DIR holds `cases.yaml` (a list of cases: `id`, `category`, optional `also`) and `cases/<id>.log`.
Each log is diagnosed alone, with the bundled rules, as `ascend-doctor diagnose` would.

Scoring:
- a case is right at top-1 when the first finding's category is its `category` or one of its
  `also`, and at top-3 when one of the first three is;
- a `not_ascend` or `no_failure` case is right at top-1 when the first finding (if any) is
  `not_ascend` or `no_failure`, and at top-3 when none of the first three claims another category.

Prints top-1 / top-3, one line per miss (expected, got) and the per-category table. Exit 0.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from ascend_doctor.engine import ScanOptions, diagnose  # noqa: E402
from ascend_doctor.model import NOT_A_FAILURE  # noqa: E402
from ascend_doctor.rulebase.load import load_rulebase  # noqa: E402

NEGATIVE = NOT_A_FAILURE

_RULEBASE = None


def categories_of(log: str) -> list[str]:
    """The categories of the report's findings for one log, in rank order."""
    global _RULEBASE
    if _RULEBASE is None:
        _RULEBASE = load_rulebase()
    report = diagnose([log], _RULEBASE, ScanOptions(jobs=1))
    return [finding.rule.category for finding in report.findings]


def score(case: dict, got: list[str]) -> tuple[bool, bool]:
    """(right at top-1, right at top-3) for one case."""
    if case["category"] in NEGATIVE:
        top1 = not got or got[0] in NEGATIVE
        top3 = all(category in NEGATIVE for category in got[:3])
        return top1, top3
    accepted = {case["category"], *(case.get("also") or ())}
    return bool(got) and got[0] in accepted, any(category in accepted for category in got[:3])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dir", type=Path, help="a directory with cases.yaml and cases/")
    parser.add_argument("--jobs", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--json", action="store_true", help="print the per-case results as JSON")
    parser.add_argument("--only", help="comma-separated case ids to run")
    args = parser.parse_args(argv)

    cases = yaml.safe_load((args.dir / "cases.yaml").read_text(encoding="utf-8"))
    if args.only:
        wanted = set(args.only.split(","))
        cases = [case for case in cases if str(case["id"]) in wanted]
    logs = [str(args.dir / "cases" / f"{case['id']}.log") for case in cases]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(categories_of, logs, chunksize=4))

    top1 = top3 = 0
    per_category: dict[str, Counter] = {}
    rows = []
    misses = []
    for case, got in zip(cases, results):
        right1, right3 = score(case, got)
        top1 += right1
        top3 += right3
        counts = per_category.setdefault(case["category"], Counter())
        counts.update(cases=1, top1=right1, top3=right3)
        rows.append({"id": str(case["id"]), "expected": case["category"], "got": got[:3], "top1": right1})
        if not right1:
            misses.append((str(case["id"]), case["category"], got[:3], right3))

    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    total = len(cases) or 1
    for case_id, expected, got, right3 in misses:
        shown = ", ".join(got) if got else "(no finding)"
        print(f"miss {case_id}: expected {expected}; got {shown}{'  [top-3 ok]' if right3 else ''}")
    print()
    print(f"{'category':<32} {'cases':>5} {'top-1':>6} {'top-3':>6}")
    for category, counts in sorted(per_category.items(), key=lambda item: -item[1]["cases"]):
        print(f"{category:<32} {counts['cases']:>5} {counts['top1']:>6} {counts['top3']:>6}")
    print()
    print(f"top-1: {top1}/{len(cases)} = {100 * top1 / total:.1f} %")
    print(f"top-3: {top3}/{len(cases)} = {100 * top3 / total:.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
