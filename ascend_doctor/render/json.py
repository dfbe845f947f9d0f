"""The versioned JSON document (`--format json`); schema 2 is described in docs/json-report.md."""

from __future__ import annotations

import json
from typing import Any, TextIO

from ascend_doctor.cluster.wire import SCHEMA_VERSION, NodeFacts
from ascend_doctor.model import Evidence, Finding, InputRecord, Report
from ascend_doctor.regexes import regex
from ascend_doctor.render.advice import finding_fingerprint
from ascend_doctor.render.base import earlier_run_note, spread, verdict


def evidence_dict(evidence: Evidence) -> dict[str, Any]:
    item: dict[str, Any] = {"path": evidence.path, "line": evidence.line, "text": evidence.text}
    if evidence.rank is not None:
        item["rank"] = evidence.rank
    if evidence.timestamp is not None:
        item["timestamp"] = evidence.timestamp
    if evidence.captures:
        item["captures"] = dict(evidence.captures)
    return item


def finding_dict(finding: Finding, position: int, lang: str) -> dict[str, Any]:
    rule = finding.rule
    return {
        "rank": position,
        "rule_id": rule.id,
        "category": rule.category,
        "severity": rule.severity.value,
        "kind": rule.kind.value,
        "role": finding.role,
        "related_to": finding.related_to,
        "also_matched": list(finding.also),
        "title": rule.title.get(lang),
        "earlier_run": _earlier_run(finding, lang),
        "cause": rule.cause.get(lang),
        "fix": rule.fix.get(lang),
        "env": [{"name": e.name, "value": e.value, "why": e.why.get(lang)} for e in finding.env],
        "confidence": finding.confidence,
        "count": finding.count,
        "paths": list(finding.paths),
        "ranks": list(finding.ranks),
        "fingerprint": finding_fingerprint(finding),
        "evidence": [evidence_dict(evidence) for evidence in finding.evidence],
    }


def _earlier_run(finding: Finding, lang: str) -> dict[str, Any] | None:
    """For a finding only an earlier run showed: how long before the latest run, and the note."""
    if finding.earlier_run is None:
        return None
    return {"seconds_before": round(finding.earlier_run), "note": earlier_run_note(finding, lang)}


def input_dict(record: InputRecord) -> dict[str, Any]:
    item: dict[str, Any] = {"path": record.path, "status": record.status}
    if record.skipped:
        item["reason"] = record.reason
    else:
        item["lines"] = record.lines
        item["bytes"] = record.size
    if record.notes:
        item["notes"] = list(record.notes)
    return item


def report_dict(report: Report) -> dict[str, Any]:
    facts = NodeFacts(report)
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "ascend-doctor", "version": report.tool_version},
        **facts.head(),
        "verdict": verdict(report),
        "spread": spread(report),
        "rules": report.rule_count,
        "inputs": [
            {**input_dict(record), **facts.input_extras(index)} for index, record in enumerate(report.inputs)
        ],
        "warnings": list(report.warnings),
        "findings": [
            {**finding_dict(finding, position, report.lang), **facts.finding_extras(finding)}
            for position, finding in enumerate(report.findings, start=1)
        ],
        "rules_matched": facts.rules_matched(),
    }


# A placeholder only where a key is "hits": a quote inside log text is always escaped.
_HITS = regex(r'(?<="hits": )"\\u0000hits(\d+)\\u0000"')
HITS_INDENT = " " * 8  # "inputs": [ { "hits": [ here


def dumps(document: dict[str, Any]) -> str:
    """The document indented, but each input's hits one to a line: a big log has thousands."""
    hits = []
    for number, item in enumerate(document["inputs"]):
        hits.append(item["hits"])
        item["hits"] = f"\x00hits{number}\x00"
    text = json.dumps(document, ensure_ascii=False, indent=2)
    return _HITS.sub(lambda found: _hit_lines(hits[int(found.group(1))]), text)


def _hit_lines(hits: list[Any]) -> str:
    if not hits:
        return "[]"
    lines = ",\n".join(HITS_INDENT + json.dumps(hit, ensure_ascii=False) for hit in hits)
    return f"[\n{lines}\n{HITS_INDENT[:-2]}]"


class JsonRenderer:
    name = "json"

    def render(self, report: Report, stream: TextIO) -> None:
        stream.write(dumps(report_dict(report)))
        stream.write("\n")
