"""SARIF 2.1.0: validates against the OASIS schema, lists the whole rule base, maps levels and paths."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ascend_doctor.model import Evidence, InputRecord
from ascend_doctor.render.sarif import artifact_uri
from ascend_doctor.rulebase.load import load_rulebase
from tests.conftest import run_cli
from tests.render.sample import OOM, RULES, finding, render, sample_report

SCHEMA = Path(__file__).parent / "sarif-schema-2.1.0.json"


@lru_cache(maxsize=1)
def validator() -> jsonschema.Draft4Validator:
    return jsonschema.Draft4Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))


def valid(text: str) -> dict[str, Any]:
    document = json.loads(text)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator().iter_errors(document)]
    assert not errors, errors
    return document


REPORTS = {
    "sample": sample_report(),
    "zero findings": sample_report()._replace(findings=()),
    "only skipped inputs": sample_report()._replace(
        findings=(),
        inputs=(InputRecord("gone.log", "skipped", "no such file or directory"),),
    ),
    "warnings": sample_report()._replace(warnings=("rule cache was rebuilt",)),
}


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_validates_against_the_schema(name: str) -> None:
    run = valid(render("sarif", REPORTS[name]))["runs"][0]
    assert run["invocations"][0]["executionSuccessful"] is True
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == [rule.id for rule in RULES]


def test_results_levels_locations_and_fingerprints() -> None:
    report = sample_report()
    results = valid(render("sarif", report))["runs"][0]["results"]
    assert [r["level"] for r in results] == ["error", "warning", "note"]
    assert [r["ruleIndex"] for r in results] == [0, 1, 2]
    first = results[0]
    fingerprints = [item["fingerprint"] for item in json.loads(render("json", report))["findings"]]
    assert [r["partialFingerprints"] for r in results] == [
        {"ascendDoctorFinding/v1": f} for f in fingerprints
    ]
    assert len(set(fingerprints)) == 3
    location = first["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "logs/rank0.log"
    assert location["region"]["startLine"] == 41
    assert [r["physicalLocation"]["region"]["startLine"] for r in first["relatedLocations"]] == [42]


def test_rule_descriptors_carry_title_cause_fix_and_exports() -> None:
    rules = valid(render("sarif", sample_report()))["runs"][0]["tool"]["driver"]["rules"]
    oom = rules[0]
    assert oom["shortDescription"]["text"] == OOM.title.en
    assert oom["fullDescription"]["text"] == OOM.cause.en
    assert "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True" in oom["help"]["text"]
    assert oom["properties"]["category"] == "device_out_of_memory"
    assert "device_out_of_memory" in oom["properties"]["tags"]


def test_skipped_inputs_are_notifications() -> None:
    run = valid(render("sarif", sample_report()))["runs"][0]
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert [n["message"]["text"] for n in notes] == ["skipped logs/core.bin: binary file"]


def test_uris() -> None:
    assert artifact_uri("logs/rank 0.log") == "logs/rank%200.log"
    assert artifact_uri("/var/log/npu/a.log") == "file:///var/log/npu/a.log"
    report = sample_report()._replace(findings=(finding(OOM, (Evidence("/abs/x.log", 1, "EL0004"),)),))
    uri = valid(render("sarif", report))["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert uri["artifactLocation"]["uri"] == "file:///abs/x.log"


def test_cli_lists_the_whole_rule_base(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("EL0004: Failed to allocate memory.\n", encoding="utf-8")
    result = run_cli("diagnose", "-f", "sarif", str(log), str(tmp_path / "missing.log"))
    run = valid(result.stdout)["runs"][0]
    assert len(run["tool"]["driver"]["rules"]) == len(load_rulebase([]).rules)
    assert run["results"] and run["invocations"][0]["toolExecutionNotifications"]
