"""The bundled rule base as a whole: complete, bilingual, classified, prefilterable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ascend_doctor.match.literals import required_literals
from ascend_doctor.rulebase.load import load_rulebase
from ascend_doctor.rulebase.prose import prose_problems
from ascend_doctor.rulebase.taxonomy import categories
from tests.conftest import run_cli

RULES = load_rulebase(use_cache=False).rules
BY_ID = pytest.mark.parametrize("rule", RULES, ids=[rule.id for rule in RULES])


def test_the_rule_base_is_not_empty() -> None:
    assert len(RULES) >= 10


@BY_ID
def test_id_prefix_names_its_file(rule) -> None:
    assert rule.id.split(".", 1)[0] == Path(rule.path).stem


@BY_ID
def test_prose_is_bilingual(rule) -> None:
    for text in (rule.title, rule.cause, rule.fix, *(env.why for env in rule.env)):
        assert text.en.strip() and text.zh.strip(), f"{rule.id}: every text needs en and zh"


@BY_ID
def test_chinese_prose_has_no_space_between_two_cjk_characters(rule) -> None:
    assert prose_problems(rule) == []


@BY_ID
def test_every_pattern_has_a_prefilter_literal(rule) -> None:
    for pattern in rule.patterns:
        assert required_literals(pattern), f"{rule.id}: {pattern!r} would run on every line"


@BY_ID
def test_rule_names_its_sources(rule) -> None:
    assert rule.sources, f"{rule.id}: say where the knowledge comes from"


def test_categories_come_from_the_taxonomy() -> None:
    assert {rule.category for rule in RULES} <= set(categories())


def test_rules_list_of_an_unknown_category_is_a_usage_error_naming_the_valid_ones() -> None:
    result = run_cli("rules", "list", "--category", "nope")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "Invalid value for '--category': 'nope' is not one of" in result.stderr
    assert all(f"'{category}'" in result.stderr for category in categories())


def test_rules_list_of_a_category_lists_exactly_its_rules() -> None:
    result = run_cli("rules", "list", "--category", "hccl_timeout", "--format", "json")
    assert result.exit_code == 0
    listed = json.loads(result.stdout)
    assert {"hccl.ei0002-notify-timeout", "hccl.watchdog-timeout"} <= {rule["id"] for rule in listed}
    assert {rule["category"] for rule in listed} == {"hccl_timeout"}


def test_rules_show_gives_links_a_user_can_open_and_patterns_only_when_verbose(tmp_path: Path) -> None:
    link = "https://github.com/Ascend/pytorch/issues/7"
    rule_file = tmp_path / "team.yaml"
    rule_file.write_text(
        "rules:\n"
        "  - id: team.shard-corrupt\n"
        "    category: not_ascend\n"
        "    severity: error\n"
        "    title: {en: Shard corrupt, zh: 分片损坏}\n"
        "    cause: {en: The shard is corrupt., zh: 分片损坏。}\n"
        "    fix: {en: Rebuild it., zh: 重建。}\n"
        "    patterns: ['ShardCorrupt: \\d+']\n"
        "    examples: {match: ['ShardCorrupt: 7'], no_match: ['Shard ok']}\n"
        f"    sources: [seed 000 problem 9, knowledge §2 npu_oom, '{link}', '{link}']\n",
        encoding="utf-8",
    )
    shown = run_cli("rules", "show", "team.shard-corrupt", "--rules", str(tmp_path))
    assert shown.exit_code == 0
    assert shown.stdout.count(link) == 1
    for internal in ("seed 000", "knowledge §", "ShardCorrupt: \\d+"):
        assert internal not in shown.stdout
    verbose = run_cli("rules", "show", "team.shard-corrupt", "--rules", str(tmp_path), "--verbose")
    assert "ShardCorrupt: \\d+" in verbose.stdout
