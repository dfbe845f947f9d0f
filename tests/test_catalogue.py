"""The CANN code catalogue: the shipped data, `explain CODE`, and catalogue findings in diagnose."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from ascend_doctor.rulebase import catalogue
from ascend_doctor.rulebase.taxonomy import categories
from tests.conftest import FIXTURES, REPO, diagnose_json, run_cli

SAMPLE = FIXTURES / "catalogue" / "codes-sample.yaml"
SHIPPED = REPO / "ascend_doctor" / "rulebase" / "catalogue.json"


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location("gen_catalogue", REPO / "scripts" / "gen_catalogue.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def shipped() -> dict[str, Any]:
    return _generator().unpack(json.loads(SHIPPED.read_text("utf-8")))


def test_the_shipped_records_are_what_the_script_makes_of_them(shipped: dict[str, Any]) -> None:
    sample = yaml.safe_load(SAMPLE.read_text("utf-8"))
    made = _generator().build(sample)
    committed = {(item["system"], item["code"]): item for item in shipped["codes"]}
    for item in made["codes"][: len(sample)]:  # then come the inner codes the sample lacks
        assert committed[(item["system"], item["code"])] == item, item["code"]
    assert made["advice"] == shipped["advice"]


def test_upstream_prose_is_never_shipped() -> None:
    made = json.dumps(_generator().build(yaml.safe_load(SAMPLE.read_text("utf-8"))), ensure_ascii=False)
    assert "UPSTREAM PROSE" not in made
    assert "中文文档文本" not in made


def test_the_committed_rule_file_is_what_the_script_writes(shipped: dict[str, Any]) -> None:
    assert (REPO / "rules" / "catalogue.yaml").read_text("utf-8") == _generator().rules_document(shipped)


def test_every_code_is_shipped_with_a_valid_category_advice_and_source(shipped: dict[str, Any]) -> None:
    records = [item for item in shipped["codes"] if item["class"] != "inner error (unregistered)"]
    assert shipped["source_codes"] == len(records) == 1849
    assert len({(item["system"], item["code"]) for item in records}) == 1849
    known = categories()
    for item in shipped["codes"]:
        assert item["category"] in known, item["code"]
        assert item["advice"] in shipped["advice"], item["code"]
        assert not re.match(r"(?i)knowledge|seed", item["source"]), item["code"]
    for text in shipped["advice"].values():
        assert text["en"] and re.search(r"[\u4e00-\u9fff]", text["zh"])
    linked = [item for item in records if item["source"].startswith("https://gitcode.com/cann/")]
    assert len(linked) > 1800


def explain_text(*args: str, lang: str = "en") -> str:
    result = run_cli("explain", *args, "--lang", lang)
    assert result.exit_code == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize(
    ("code", "system", "category"),
    [
        ("EL0004", "driver", "device_out_of_memory"),
        ("EZ0021", "operators", "operator_dtype_unsupported"),
        ("EI0002", "HCCL", "hccl_timeout"),
        ("E40021", "TEFusion", "operator_compile_failure"),
        ("0x26", "runtime", "aicore_exception"),
        ("207018", "ACL", "device_out_of_memory"),
        ("-8005", "driver", "needs_more_evidence"),
        ("1343225857", "GE", "needs_more_evidence"),
        ("561002", "aclnn", "op_shape_unsupported"),
    ],
)
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_explain_gives_system_meaning_category_advice_and_link(
    code: str, system: str, category: str, lang: str
) -> None:
    entry = next(e for e in catalogue.lookup(code) if e.system == system)
    text = explain_text(code, lang=lang)
    block = text[text.index(f"{entry.code} ({system}, ") :]
    assert category in block
    assert entry.advice.get(lang) in block
    assert entry.source and entry.source in block
    if entry.messages:
        assert entry.messages[0] in block  # as CANN prints it, in either language
    assert ("下一步检查" in block) == (lang == "zh") and ("check next" in block) == (lang == "en")


@pytest.mark.parametrize("query", ["retCode=0x26", "0x26", "0X26", "38", "RETCODE=0x26"])
def test_explain_accepts_the_forms_a_ts_code_is_written_in(query: str) -> None:
    assert "TS_ERROR_AICORE_EXCEPTION" in explain_text(query)


def test_explain_finds_a_ge_status_by_its_hex_form_and_a_code_in_lower_case() -> None:
    assert "1343225857 (GE, " in explain_text("0x50100001")
    assert "EZ0021 (operators, " in explain_text("ez0021")


def test_a_number_several_systems_use_lists_each_meaning() -> None:
    text = explain_text("7")
    assert "HCCL_E_UNAVAIL" in text and "DRV_ERROR_INNER_ERR" in text


def test_a_rule_that_explains_the_code_comes_before_the_catalogue() -> None:
    text = explain_text("EL0004")
    assert text.index("memory.el0004-alloc-failed") < text.index("EL0004 (driver, ")
    assert "catalogue.error-code" not in explain_text("EZ0021")


def test_explain_shows_no_internal_references_and_patterns_only_when_verbose() -> None:
    text = explain_text("EZ9999")
    assert not re.search(r"knowledge §|seed \d|pattern:", text)
    assert "pattern:" in explain_text("EZ9999", "--verbose")
    sources = [line for line in explain_text("HCCL_CONNECT_TIMEOUT").splitlines() if "source:" in line]
    assert sources and not any("seed " in line for line in sources)
    assert len(sources) == len(set(sources))


def test_explain_json_lists_the_catalogue_entries() -> None:
    result = run_cli("explain", "0x26", "--format", "json")
    doc = json.loads(result.stdout)
    entry = next(code for code in doc["codes"] if code["code"] == "0x26")
    assert entry["category"] == "aicore_exception" and entry["class"].startswith("TS task error")


def _findings(tmp_path: Path, *lines: str) -> list[dict[str, Any]]:
    log = tmp_path / "job.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    doc, _ = diagnose_json(str(log))
    return doc["findings"]


@pytest.mark.parametrize(
    ("line", "rule_id", "category"),
    [
        (
            "[ERROR] GE(1,python): EH0002: Argument model must not be null.",
            "catalogue.EH0002",
            "needs_more_evidence",
        ),
        (
            "[ERROR] ASCENDCL(1,python): report errCode: EZ0021 while checking Add",
            "catalogue.EZ0021",
            "operator_dtype_unsupported",
        ),
        (
            "[ERROR] PROFILING(1,python): start failed, ErrCode=EK0001",
            "catalogue.EK0001",
            "needs_more_evidence",
        ),
        (
            "[ERROR] APP(1,python): aclmdlLoadFromFile failed, error code is 100013",
            "catalogue.100013",
            "needs_more_evidence",
        ),
        (
            "[ERROR] APP(1,python): aclmdlLoad failed, error code: 100014",
            "catalogue.100014",
            "needs_more_evidence",
        ),
        (
            "[ERROR] RUNTIME(1,python): halMemAlloc failed, retCode=0x7020016",
            "catalogue.0x7020016",
            "device_out_of_memory",
        ),
        (
            "[ERROR] RUNTIME(1,python): Task exception! retCode=0x1f, [sys dma transfer failed]",
            "catalogue.0x1f",
            "needs_more_evidence",
        ),
        ("dcmi_get_device_info failed [Code:-8005]", "catalogue.-8005", "needs_more_evidence"),
        (
            "[ERROR] APP(1,python): aclrtSetDevice returned aclError:507033",
            "catalogue.507033",
            "needs_more_evidence",
        ),
        (
            "[ERROR] APP(1,python): launch failed for Add, errno:561002",
            "catalogue.561002",
            "op_shape_unsupported",
        ),
        ("[ERROR] APP(1,python): model execute error=545601", "catalogue.545601", "needs_more_evidence"),
        (
            "[ERROR] HCCL(1,python): HcclAllGather failed, error code is 7 (hccl)",
            "catalogue.7",
            "needs_more_evidence",
        ),
    ],
)
def test_a_code_in_any_framing_gives_one_catalogue_finding(
    tmp_path: Path, line: str, rule_id: str, category: str
) -> None:
    findings = _findings(tmp_path, line)
    assert [(f["rule_id"], f["category"], f["severity"]) for f in findings] == [(rule_id, category, "error")]
    assert findings[0]["confidence"] <= 0.4
    assert findings[0]["fix"]


def test_lines_with_one_code_fold_into_one_finding(tmp_path: Path) -> None:
    line = "[ERROR] APP(1,python): aclmdlLoadFromFile failed, error code is 100013"
    findings = _findings(tmp_path, line, "step 2", line)
    assert [(f["rule_id"], f["count"]) for f in findings] == [("catalogue.100013", 2)]


def test_a_specific_rule_wins_the_line_with_no_duplicate(tmp_path: Path) -> None:
    findings = _findings(tmp_path, "[ERROR] APP(1,python): aclrtMalloc failed, error code is 207018")
    assert [f["rule_id"] for f in findings] == ["memory.device-oom-207018"]


def test_a_rule_listing_the_code_absorbs_it(tmp_path: Path) -> None:
    findings = _findings(
        tmp_path, "[ERROR] RUNTIME(1,python): EE9999: [PID: 1] Task execute failed, stream_id:2"
    )
    assert [f["rule_id"] for f in findings] == ["cann.ee9999-inner-error"]


def test_a_code_quoted_in_a_hint_is_at_most_a_note(tmp_path: Path) -> None:
    findings = _findings(tmp_path, "Hint: if you see 'EH0002: ...' pass a real model pointer", "# see EK0001")
    assert findings and all(f["severity"] == "info" for f in findings)


def test_numbers_outside_an_error_framing_are_no_codes(tmp_path: Path) -> None:
    lines = (
        "2024-05-01 12:00:01 pid 507015 size 207001 took 38 ms ret=0",
        "open(/data/x) failed, errno=2",
        "epoch 100013 loss 0.507015",
        "id=XEH00021 done",
    )
    assert _findings(tmp_path, *lines) == []


def test_sarif_names_the_code_as_a_stable_rule(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text("[ERROR] GE(1,python): EH0002: Argument model must not be null.\n", encoding="utf-8")
    result = run_cli("diagnose", "--format", "sarif", str(log))
    run = json.loads(result.stdout)["runs"][0]
    assert [r["ruleId"] for r in run["results"]] == ["catalogue.EH0002"]
    assert "catalogue.EH0002" in {rule["id"] for rule in run["tool"]["driver"]["rules"]}


@pytest.mark.parametrize("engine", ["python", "hyperscan"])
def test_both_engines_find_the_same_codes(tmp_path: Path, engine: str) -> None:
    if engine == "hyperscan":
        pytest.importorskip("hyperscan")
    log = tmp_path / "job.log"
    lines = [f"filler line {n} with nothing" for n in range(4000)]
    lines[100] = "[ERROR] GE(1,python): EH0002: Argument model must not be null."
    lines[3000] = "[ERROR] RUNTIME(1,python): halMemAlloc failed, retCode=0x7020016"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    doc, _ = diagnose_json(str(log), "--engine", engine, "--no-cache")
    assert [(f["rule_id"], f["evidence"][0]["line"]) for f in doc["findings"]] == [
        ("catalogue.EH0002", 101),
        ("catalogue.0x7020016", 3001),
    ]
