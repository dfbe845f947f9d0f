"""GitLab Code Quality JSON (`--format gitlab`): one issue per finding per file it was seen in."""

from __future__ import annotations

import json
from typing import Any, TextIO

from ascend_doctor.model import Evidence, Finding, Report
from ascend_doctor.render.advice import advice_lines, location_fingerprint

SEVERITIES = {"error": "critical", "warning": "major", "info": "info"}


def first_per_path(finding: Finding) -> list[Evidence]:
    """The first evidence line of each file: one issue per file, not per repeated line."""
    firsts: dict[str, Evidence] = {}
    for evidence in finding.evidence:
        firsts.setdefault(evidence.path, evidence)
    return list(firsts.values())


def issue(finding: Finding, evidence: Evidence, lang: str) -> dict[str, Any]:
    """A Code Quality issue; the fingerprint leaves out the line number so it survives line shifts."""
    return {
        "description": " — ".join(advice_lines(finding, lang)),
        "check_name": finding.rule.id,
        "fingerprint": location_fingerprint(finding.rule.id, evidence),
        "severity": SEVERITIES[finding.rule.severity.value],
        "location": {"path": evidence.path, "lines": {"begin": evidence.line}},
    }


class GitlabRenderer:
    name = "gitlab"

    def render(self, report: Report, stream: TextIO) -> None:
        issues = [
            issue(finding, evidence, report.lang)
            for finding in report.findings
            for evidence in first_per_path(finding)
        ]
        json.dump(issues, stream, ensure_ascii=False, indent=2)
        stream.write("\n")
