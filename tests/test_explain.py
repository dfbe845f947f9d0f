"""`ascend-doctor explain`: error codes, rule ids and environment variables, offline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import regex

from ascend_doctor.rulebase.knowledge import env_vars, find_env_var
from ascend_doctor.rulebase.load import load_rulebase
from tests.conftest import run_cli

USER_RULES = """\
rules:
  - id: team.shard-index-corrupt
    category: not_ascend
    severity: error
    title: {en: Data shard index is corrupt, zh: 数据分片索引损坏}
    cause: {en: The loader read a shard whose index does not match its data., zh: 加载器读取的分片索引与数据不一致。}
    fix: {en: Rebuild the shard index., zh: 重建分片索引。}
    patterns: ['ShardIndexCorrupt: (?P<shard>[\\w-]+)', '\\bXQ40404\\b']
    examples:
      match: ['ShardIndexCorrupt: part-0007 (ZZ31337)']
      no_match: ['ShardIndex verified: part-0007']
    aliases: [team.old-shard-rule]
"""


def explain_text(*args: str) -> str:
    result = run_cli("explain", *args, "--lang", "en")
    assert result.exit_code == 0, result.stderr
    return result.stdout


def explain_json(*args: str) -> dict[str, Any]:
    result = run_cli("explain", *args, "--format", "json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def shown_rule_ids(text: str) -> set[str]:
    """The rule ids `print_rule` headed its blocks with."""
    return {line.split(":")[0] for line in text.splitlines() if line and not line.startswith(" ")}


@pytest.fixture
def user_rules(tmp_path: Path) -> str:
    (tmp_path / "team.yaml").write_text(USER_RULES, encoding="utf-8")
    return str(tmp_path)


@pytest.mark.parametrize(
    ("code", "rule_id"),
    [
        ("EL0004", "memory.el0004-alloc-failed"),
        ("el0004", "memory.el0004-alloc-failed"),
        ("EZ9999", "cann.ez9999-inner-error"),
        ("EI0002", "hccl.ei0002-notify-timeout"),
        ("507015", "runtime.aicore-exception-507015"),
        ("207018", "memory.device-oom-207018"),
        ("ERR02011", "hccl.dist-timeout-err02011"),
        ("err02011", "hccl.dist-timeout-err02011"),
    ],
)
def test_an_error_code_shows_the_rules_that_explain_it(code: str, rule_id: str) -> None:
    text = explain_text(code)
    assert rule_id in shown_rule_ids(text)
    assert "fix:" in text and "cause:" in text


def test_a_code_shows_only_rules_that_list_it() -> None:
    doc = explain_json("ez9999")
    assert doc["rules"], "some rule must explain EZ9999"
    for rule in doc["rules"]:
        assert "EZ9999" in (code.upper() for code in rule["codes"]), rule["id"]


def test_a_rule_id_shows_that_rule() -> None:
    text = explain_text("hccl.collective-bool-dtype")
    assert shown_rule_ids(text) == {"hccl.collective-bool-dtype"}
    assert "defined in:" in text and "rules/hccl.yaml" in text


def test_a_rule_alias_shows_the_renamed_rule(user_rules: str) -> None:
    text = explain_text("team.old-shard-rule", "--rules", user_rules)
    assert shown_rule_ids(text) == {"team.shard-index-corrupt"}


def test_a_code_no_rule_lists_is_found_in_examples_then_patterns(user_rules: str) -> None:
    assert shown_rule_ids(explain_text("zz31337", "--rules", user_rules)) == {"team.shard-index-corrupt"}
    assert shown_rule_ids(explain_text("XQ40404", "--rules", user_rules)) == {"team.shard-index-corrupt"}


def test_hccl_connect_timeout_gives_meaning_default_range_and_remedies() -> None:
    text = explain_text("HCCL_CONNECT_TIMEOUT")
    assert text.startswith("HCCL_CONNECT_TIMEOUT (HCCL)")
    lines = {line.split(":")[0].strip(): line for line in text.splitlines()}
    assert "120" in lines["default"]
    assert "120" in lines["values"] and "7200" in lines["values"]
    assert "EI0006" in lines["change it"]
    assert "source" in lines
    assert "export HCCL_CONNECT_TIMEOUT=1800" in text
    assert "hccl.ei0006-socket-timeout" in text


def test_an_env_var_is_found_ignoring_case_and_by_alias() -> None:
    assert explain_text("hccl_connect_timeout").startswith("HCCL_CONNECT_TIMEOUT")
    assert explain_text("HCCL_DESYNC_DEBUG").startswith("TORCH_HCCL_DESYNC_DEBUG")


def test_json_for_an_env_var() -> None:
    doc = explain_json("HCCL_CONNECT_TIMEOUT")
    assert set(doc) == {"query", "env_var", "rules", "codes"}
    assert doc["query"] == "HCCL_CONNECT_TIMEOUT" and doc["codes"] == []
    var = doc["env_var"]
    assert var["name"] == "HCCL_CONNECT_TIMEOUT"
    assert set(var["meaning"]) == {"en", "zh"} and set(var["when"]) == {"en", "zh"}
    assert "120" in var["default"] and "7200" in var["values"]
    assert var["sources"]
    assert doc["rules"]
    for rule in doc["rules"]:
        assert "HCCL_CONNECT_TIMEOUT" in (remedy["name"] for remedy in rule["env"]), rule["id"]


def test_json_for_a_code_has_rule_objects_and_no_env_var() -> None:
    doc = explain_json("EL0004")
    assert doc["env_var"] is None
    rule = next(r for r in doc["rules"] if r["id"] == "memory.el0004-alloc-failed")
    assert {"id", "title", "cause", "fix", "env", "patterns", "codes", "source"} <= set(rule)
    assert rule["severity"] in ("error", "warning", "info")


def test_chinese_output() -> None:
    env = run_cli("explain", "HCCL_CONNECT_TIMEOUT", "--lang", "zh")
    assert env.exit_code == 0
    assert "默认值" in env.stdout and "建立" in env.stdout
    code = run_cli("explain", "EL0004", "--lang", "zh")
    assert code.exit_code == 0
    title = load_rulebase(()).find("memory.el0004-alloc-failed").title.zh
    assert title in code.stdout


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_unknown_code_exits_2_and_suggests_the_nearest(fmt: str) -> None:
    result = run_cli("explain", "EL00004", "--format", fmt)
    assert result.exit_code == 2
    assert result.stdout == ""
    message = result.stderr.strip()
    assert "\n" not in message and "Traceback" not in message
    assert message.startswith("ascend-doctor: error: unknown")
    assert "'EL00004'" in message
    nearest = message.split("nearest known: ")[1].split(", ")
    assert "EL0004" in nearest and len(nearest) <= 3


def test_an_unknown_code_like_no_known_one_gets_no_far_fetched_suggestion() -> None:
    result = run_cli("explain", "ZZ1234")
    assert result.exit_code == 2
    assert "nearest known" not in result.stderr and "ascend-doctor rules list" in result.stderr


@pytest.mark.parametrize("code", ["0x7020099", "EL0094"])
def test_a_code_one_digit_off_a_known_one_is_another_error_not_a_typo(code: str) -> None:
    """Codes are numbered in sequence: 0x7020019 (no event resource) is no hint for 0x7020099,
    which no catalogue lists."""
    result = run_cli("explain", code)
    assert result.exit_code == 2
    assert "nearest known" not in result.stderr and "see: ascend-doctor rules list" in result.stderr


def test_a_code_with_two_digits_swapped_suggests_the_code_first() -> None:
    result = run_cli("explain", "EL0040")
    assert result.stderr.split("nearest known: ")[1].startswith("EL0004")


def test_a_word_is_not_searched_in_rule_texts() -> None:
    result = run_cli("explain", "allocate")  # in 50 lines of the rule files, but no area, code or id
    assert result.exit_code == 2


def test_every_env_var_a_bundled_rule_recommends_is_documented() -> None:
    missing = {
        f"{rule.id}: {remedy.name}"
        for rule in load_rulebase(()).rules
        for remedy in rule.env
        if find_env_var(remedy.name) is None
    }
    assert not missing, f"add these to ascend_doctor/rulebase/knowledge/env_vars.yaml: {sorted(missing)}"


@pytest.mark.parametrize(
    "name",
    [
        "TASK_QUEUE_ENABLE",
        "ASCEND_SLOG_PRINT_TO_STDOUT",
        "ASCEND_GLOBAL_LOG_LEVEL",
        "ASCEND_GLOBAL_EVENT_ENABLE",
        "HCCL_WHITELIST_DISABLE",
        "HCCL_IF_IP",
        "HCCL_BUFFSIZE",
        "DUMP_GE_GRAPH",
        "COMBINED_ENABLE",
    ],
)
def test_the_env_vars_of_the_seed_guides_are_documented(name: str) -> None:
    assert find_env_var(name) is not None


def test_every_knowledge_entry_is_complete_in_both_languages() -> None:
    assert len(env_vars()) >= 100
    for var in env_vars().values():
        assert var.name and var.layer and var.default and var.values and var.sources, var.name
        for text in (var.meaning, var.when):
            assert text.en and text.zh, var.name
            assert any("\u4e00" <= char <= "\u9fff" for char in text.zh), var.name
            assert not regex.search(r"\p{Han} \p{Han}", text.zh), f"{var.name}: YAML folding split Chinese"


def shown_rule_order(text: str) -> list[str]:
    return [line.split(":")[0] for line in text.splitlines() if line and not line.startswith(" ")]


@pytest.mark.parametrize(
    ("code", "first"),
    [
        ("ERR02200", "hccl.api-call-failed"),
        ("err02200", "hccl.api-call-failed"),
        ("EI0002", "hccl.ei0002-notify-timeout"),
        ("EL0004", "memory.el0004-alloc-failed"),
    ],
)
def test_the_rule_whose_own_title_and_patterns_carry_the_code_comes_first(code: str, first: str) -> None:
    assert shown_rule_order(explain_text(code))[0] == first
    assert explain_json(code)["rules"][0]["id"] == first


def test_a_rule_that_only_lists_a_code_still_comes_after_the_ones_that_match_it() -> None:
    order = shown_rule_order(explain_text("ERR02200"))
    assert order.index("hccl.api-call-failed") < order.index("hccl.init-root-info-failed")


def test_an_area_keyword_finds_the_rules_of_that_area_first() -> None:
    bundled = [rule.id for rule in load_rulebase(()).rules if rule.id.startswith("hccl.")]
    for query in ("hccl", "HCCL"):
        order = shown_rule_order(explain_text(query))
        assert order[: len(bundled)] == bundled
        assert "distributed.hccl-backend-unknown" in order[len(bundled) :]  # it lists hccl as a code


def test_env_vars_a_rule_lists_are_not_shown_as_its_codes() -> None:
    lines = explain_text("EI0002").splitlines()
    block = lines[: next(i for i, line in enumerate(lines[1:], 1) if not line.startswith(" "))]
    codes = next(line for line in block if line.strip().startswith("codes:"))
    assert "EI0002" in codes and "507048" in codes
    assert "HCCL_EXEC_TIMEOUT" not in codes
    assert any("export HCCL_EXEC_TIMEOUT=" in line for line in block)
