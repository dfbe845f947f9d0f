"""Which rules cost the most candidate lines on a log: `python bench/costs.py LOG [--top N]`.

A candidate line holds a rule's prefilter literal. Each one costs a look at its neighbours (the
byte gate), and each that passes the gate is decoded and matched. Rules whose literal is common
(a short number, a plain word) make most of that work; `ascend-doctor rules test` warns about
them. Prints, per rule: candidate lines, lines past the gate, and the literals that caught them.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ascend_doctor.match.matcher import Matcher
from ascend_doctor.match.scanner import CHUNK, _bounds
from ascend_doctor.read import events
from ascend_doctor.rulebase.load import load_rulebase


def blocks(path: Path):  # type: ignore[no-untyped-def]
    pending = b""
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            pending += chunk
            cut = pending.rfind(b"\n")
            if cut >= 0:
                yield pending[: cut + 1]
                pending = pending[cut + 1 :]
    if pending:
        yield pending


def costs(path: Path, engine: str) -> tuple[Counter[str], Counter[str], dict[str, Counter[str]], int]:
    rules = load_rulebase().rules
    matcher = Matcher(rules, engine)
    index = matcher._index  # the literal index: which patterns each literal stands for
    candidates: Counter[str] = Counter()
    passed: Counter[str] = Counter()
    literals: dict[str, Counter[str]] = defaultdict(Counter)
    lines = 0
    for block in blocks(path):
        lines += block.count(b"\n")
        for start, end, keys in matcher.prefilter.spans(block):
            if keys is None or end - start > events.MAX_SEGMENT:
                continue
            bounds = _bounds(block, start, end)
            for key in keys:
                ids = {rules[ref.rule_index].id for ref in index.refs[key]}
                through = matcher.worth(block, bounds, frozenset([key]))
                for rule_id in ids:
                    candidates[rule_id] += 1
                    passed[rule_id] += through
                    literals[rule_id][index.literals[key].text] += 1
    return candidates, passed, literals, lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path)
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--engine", default="auto", choices=["auto", "python", "hyperscan"])
    args = parser.parse_args()
    candidates, passed, literals, lines = costs(args.log, args.engine)
    total = sum(candidates.values())
    print(f"{lines} lines, {total} candidate line-rule pairs\n")
    print("| rule | candidate lines | past the gate | literal(s) |")
    print("|---|---|---|---|")
    for rule_id, count in candidates.most_common(args.top):
        caught = ", ".join(f"`{text!r}`" for text, _ in literals[rule_id].most_common(3))
        print(f"| {rule_id} | {count} | {passed[rule_id]} | {caught} |")


if __name__ == "__main__":
    main()
