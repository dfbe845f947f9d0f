"""SARIF 2.1.0 (`--format sarif`) for GitHub code scanning and other SARIF viewers.

One result per finding: its first evidence line is the location, the other evidence lines are
`relatedLocations`. GitHub code scanning only uses the first entry of `locations` and opens one alert
per result, so a result per evidence line would turn one cause (one fix) into many alerts, while
related locations are listed, linked, inside the single alert.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import PurePath
from typing import Any, TextIO
from urllib.parse import quote

from ascend_doctor.model import Evidence, Finding, Report, Rule
from ascend_doctor.render.advice import export_line, finding_fingerprint, labels
from ascend_doctor.render.base import headline
from ascend_doctor.render.markdown import fenced, prose

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
PROBLEM_SEVERITY = {"error": "error", "warning": "warning", "info": "recommendation"}


def artifact_uri(path: str) -> str:
    """A relative URI reference for a relative path, a `file://` URI for an absolute one."""
    if os.path.isabs(path):
        return PurePath(path).as_uri()
    return quote(PurePath(path).as_posix())


def _help(rule: Rule, lang: str) -> dict[str, str]:
    words = labels(lang)
    exports = [f"{export_line(env)}  # {env.why.get(lang).strip()}" for env in rule.env]
    text = "\n".join([f"{words['fix']}: {rule.fix.get(lang).strip()}", *exports])
    markdown = f"**{words['fix']}:** {prose(rule.fix.get(lang))}"
    if exports:
        markdown += "\n\n" + fenced("\n".join(exports), "sh")
    return {"text": text, "markdown": markdown}


def rule_descriptor(rule: Rule, lang: str) -> dict[str, Any]:
    """The rule as `tool.driver.rules` lists it."""
    return {
        "id": rule.id,
        "name": rule.id,
        "shortDescription": {"text": rule.title.get(lang).strip()},
        "fullDescription": {"text": rule.cause.get(lang).strip()},
        "help": _help(rule, lang),
        "defaultConfiguration": {"level": LEVELS[rule.severity.value]},
        "properties": {
            "category": rule.category,
            "tags": ["ascend", rule.category, rule.kind.value],
            "precision": rule.confidence.value,
            "problem.severity": PROBLEM_SEVERITY[rule.severity.value],
        },
    }


def physical_location(evidence: Evidence) -> dict[str, Any]:
    return {
        "artifactLocation": {"uri": artifact_uri(evidence.path)},
        "region": {"startLine": evidence.line, "snippet": {"text": evidence.text}},
    }


def result(finding: Finding, rule_index: int, lang: str) -> dict[str, Any]:
    """One finding: first evidence line as its location, the others as related locations."""
    rule = finding.rule
    message = f"{headline(finding, lang)} (seen {finding.count}×)"
    if finding.related_to:
        message += f"; {finding.role} of {finding.related_to}"
    item: dict[str, Any] = {
        "ruleId": rule.id,
        "ruleIndex": rule_index,
        "level": LEVELS[rule.severity.value],
        "message": {"text": message},
        "locations": [{"physicalLocation": physical_location(e)} for e in finding.evidence[:1]],
        "partialFingerprints": {"ascendDoctorFinding/v1": finding_fingerprint(finding)},
        "properties": {"confidence": finding.confidence, "role": finding.role, "ranks": list(finding.ranks)},
    }
    related = [
        {"id": index, "physicalLocation": physical_location(evidence)}
        for index, evidence in enumerate(finding.evidence[1:], start=1)
    ]
    if related:
        item["relatedLocations"] = related
    return item


def notifications(report: Report) -> list[dict[str, Any]]:
    """Skipped inputs and run warnings, as `toolExecutionNotifications`."""
    items = [
        {
            "level": "warning",
            "message": {"text": f"skipped {record.path}: {record.reason}"},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": artifact_uri(record.path)}}}],
        }
        for record in report.inputs
        if record.skipped
    ]
    return items + [{"level": "warning", "message": {"text": warning}} for warning in report.warnings]


class SarifRenderer:
    name = "sarif"

    def __init__(self, rules: Sequence[Rule] = ()) -> None:
        """`rules` is the whole rule base; without it the rules of the findings are listed."""
        self.rules = tuple(rules)

    def render(self, report: Report, stream: TextIO) -> None:
        json.dump(self.document(report), stream, ensure_ascii=False, indent=2)
        stream.write("\n")

    def document(self, report: Report) -> dict[str, Any]:
        rules = {rule.id: rule for rule in self.rules}
        for finding in report.findings:
            rules.setdefault(finding.rule.id, finding.rule)
        index = {rule_id: position for position, rule_id in enumerate(rules)}
        run = {
            "tool": {
                "driver": {
                    "name": "ascend-doctor",
                    "version": report.tool_version,
                    "rules": [rule_descriptor(rule, report.lang) for rule in rules.values()],
                }
            },
            "invocations": [
                {"executionSuccessful": True, "toolExecutionNotifications": notifications(report)}
            ],
            "results": [result(f, index[f.rule.id], report.lang) for f in report.findings],
        }
        return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
