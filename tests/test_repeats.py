"""A job that repeats one message for days is counted in full, in bounded memory."""

from __future__ import annotations

from pathlib import Path

from ascend_doctor.engine import ScanOptions, diagnose
from ascend_doctor.match.scanner import KEEP_PER_RULE
from ascend_doctor.rulebase.load import load_rulebase
from tests.conftest import diagnose_json

OOM = "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 0; 60.97 GiB total capacity)\n"


def _log(tmp_path: Path, lines: int) -> Path:
    log = tmp_path / "train.log"
    with log.open("w", encoding="utf-8") as handle:
        for step in range(lines):
            handle.write(f"[2024-12-04 10:{step // 60 % 60:02d}:{step % 60:02d}] step {step}\n")
            handle.write("EL0004: Failed to allocate memory.\n")
        handle.write(OOM)
    return log


def test_every_sighting_is_counted_past_the_matches_kept(tmp_path: Path) -> None:
    log = _log(tmp_path, 3 * KEEP_PER_RULE)
    report, _ = diagnose_json(str(log))
    top = report["findings"][0]
    assert top["category"] == "device_out_of_memory"
    assert top["count"] == 3 * KEEP_PER_RULE + 1  # every EL0004 line, and the OOM folded into it


def test_matches_kept_per_rule_are_bounded_and_the_last_line_is_kept(tmp_path: Path) -> None:
    lines = 3 * KEEP_PER_RULE
    log = _log(tmp_path, lines)
    report = diagnose([str(log)], load_rulebase(), ScanOptions(jobs=1))
    for rule_id in {match.rule_id for match in report.matches}:
        of_rule = [match for match in report.matches if match.rule_id == rule_id]
        assert len(of_rule) <= KEEP_PER_RULE
    el0004 = [m for m in report.matches if "EL0004" in m.evidence.text]
    last = max(el0004, key=lambda match: match.evidence.line)
    assert last.evidence.line == 2 * lines  # the last EL0004 line, not the 1,000th
    assert sum(1 + m.repeats for m in el0004 if m.rule_id == last.rule_id) == lines
