"""List rules that fight over the same line: every rule's `examples.match` lines run through the
whole rule base (the real matching path, prefilter and line cleaning included).

Reported, one block per pair:
  - two rules of different categories that fire on one example line;
  - two `kind: cause` rules of one category but different severity or confidence tier
    (only with --all: same-category pairs fold into one finding and rarely matter).

Usage: python bench/overlaps.py [--rules DIR] [--all]
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from io import BytesIO
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout, not an installed copy

from ascend_doctor.match.matcher import Matcher
from ascend_doctor.match.scanner import StreamScanner
from ascend_doctor.model import Kind
from ascend_doctor.rulebase.load import load_rulebase


def fired(matcher: Matcher, line: str) -> set[str]:
    scanner = StreamScanner(matcher, "<example>", 0)
    result = scanner.scan(BytesIO(line.encode("utf-8")))
    return {match.rule_id for match in result.matches}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", action="append", default=[])
    parser.add_argument("--all", action="store_true", help="also same-category cause pairs")
    args = parser.parse_args(argv)
    rulebase = load_rulebase(args.rules, use_cache=False)
    rules = {rule.id: rule for rule in rulebase.rules}
    matcher = Matcher(rulebase.rules, use_cache=False)
    pairs: dict[tuple[str, str], list[str]] = defaultdict(list)
    for rule in rulebase.rules:
        for line in rule.examples.match:
            for other in sorted(fired(matcher, line) - {rule.id}):
                pairs[tuple(sorted((rule.id, other)))].append(line)
    shown = 0
    for (one, two), lines in sorted(pairs.items()):
        a, b = rules[one], rules[two]
        if a.category == b.category and not args.all:
            continue
        both_causes = a.kind is Kind.CAUSE and b.kind is Kind.CAUSE
        tag = "CAUSE/CAUSE" if both_causes else "cause/symptom"
        same = "same-category" if a.category == b.category else "DIFFERENT"
        print(f"{tag} {same}")
        for r in (a, b):
            print(
                f"  {r.id:50s} {r.category:28s} {r.kind.value:7s} {r.severity.value:7s} {r.confidence.value}"
            )
        for line in sorted(set(lines))[:3]:
            print(f"    | {line[:150]}")
        shown += 1
    print(f"{shown} pairs", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
