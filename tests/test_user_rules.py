"""User rule files: loaded with --rules, and refused with file:line and rule id when broken."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import diagnose_json, run_cli

GOOD_RULE = """\
rules:
  - id: team.custom-loader-crash
    category: not_ascend
    severity: error
    title: {en: Our data loader crashed, zh: 数据加载器崩溃}
    cause: {en: The shard index is corrupt., zh: 分片索引损坏。}
    fix: {en: Rebuild the index., zh: 重建索引。}
    patterns: ['ShardIndexCorrupt: (?P<shard>[\\w-]+)']
    examples:
      match: ['ShardIndexCorrupt: part-0007']
      no_match: ['ShardIndex ok']
"""


def rules_dir(tmp_path: Path, text: str) -> Path:
    directory = tmp_path / "rules"
    directory.mkdir(exist_ok=True)
    (directory / "team.yaml").write_text(text, encoding="utf-8")
    return directory


def test_user_rule_is_applied_with_its_captures(tmp_path: Path) -> None:
    directory = rules_dir(tmp_path, GOOD_RULE)
    log = tmp_path / "a.log"
    log.write_text("x\nShardIndexCorrupt: part-0042\n")
    report, result = diagnose_json("--rules", str(directory), str(log))
    assert result.exit_code == 1
    top = report["findings"][0]
    assert top["rule_id"] == "team.custom-loader-crash"
    assert top["evidence"][0]["captures"] == {"shard": "part-0042"}


def test_rules_test_runs_user_examples(tmp_path: Path) -> None:
    directory = rules_dir(tmp_path, GOOD_RULE)
    result = run_cli("rules", "test", str(directory))
    assert result.exit_code == 0
    assert "2 passed, 0 failed" in result.stdout


def test_rules_test_reports_a_miss(tmp_path: Path) -> None:
    directory = rules_dir(
        tmp_path, GOOD_RULE.replace("ShardIndexCorrupt: part-0007", "ShardIndexCorrupt part-0007")
    )
    result = run_cli("rules", "test", str(directory))
    assert result.exit_code == 1
    assert "team.custom-loader-crash: missed: match[0]" in result.stdout


def test_rules_test_fails_a_space_between_two_chinese_characters(tmp_path: Path) -> None:
    folded = (
        "    cause:\n      en: The shard index is corrupt.\n      zh: >-\n        分片索引\n        损坏。\n"
    )
    text = GOOD_RULE.replace("    cause: {en: The shard index is corrupt., zh: 分片索引损坏。}\n", folded)
    result = run_cli("rules", "test", str(rules_dir(tmp_path, text)))
    assert result.exit_code == 1
    assert "team.custom-loader-crash: prose:" in result.stdout
    assert "cause.zh has a stray space in Chinese text: '引 损'" in result.stdout
    assert result.stdout.rstrip().endswith("1 prose problem(s): failed")


BROKEN = {
    "unknown key": (
        GOOD_RULE.replace("    severity: error", "    severity: error\n    colour: red"),
        "unknown key 'colour'",
    ),
    "bad regex": (GOOD_RULE.replace("(?P<shard>", "(?P<shard"), "not a valid regex"),
    "unknown category": (GOOD_RULE.replace("not_ascend", "gremlins"), "unknown category 'gremlins'"),
    "bad severity": (GOOD_RULE.replace("severity: error", "severity: fatal"), "'severity' is 'fatal'"),
    "no examples": (GOOD_RULE.replace("      no_match: ['ShardIndex ok']\n", ""), "examples.no_match"),
    "python tag": (
        GOOD_RULE.replace("severity: error", "severity: !!python/object/apply:os.system [id]"),
        "invalid YAML",
    ),
    "alias": (
        "base: &b {en: x, zh: y}\n" + GOOD_RULE.replace("{en: Rebuild the index., zh: 重建索引。}", "*b"),
        "",
    ),
    "not a mapping": ("- just\n- a list\n", "a rule file is a mapping"),
    "bad yaml": ("rules: [\n", "invalid YAML"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_rule_file_is_exit_2_with_file_and_line(tmp_path: Path, case: str) -> None:
    text, message = BROKEN[case]
    directory = rules_dir(tmp_path, text)
    log = tmp_path / "a.log"
    log.write_text("hello\n")
    result = run_cli("diagnose", "--rules", str(directory), str(log))
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith(f"ascend-doctor: error: {directory / 'team.yaml'}")
    assert message in result.stderr


def test_a_pattern_the_regex_module_itself_fails_on_is_a_rule_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import regex

    compile_pattern = regex.compile

    def failing(pattern: str, *args: Any, **kwargs: Any) -> Any:
        if "ShardIndexCorrupt" in pattern:  # as regex 2026.5 does on `(?i)[^\s\S]`
            raise AttributeError("'AnyAll' object has no attribute 'rebuild'")
        return compile_pattern(pattern, *args, **kwargs)

    monkeypatch.setattr(regex, "compile", failing)
    log = tmp_path / "a.log"
    log.write_text("hello\n")
    result = run_cli("diagnose", "--no-cache", "--rules", str(rules_dir(tmp_path, GOOD_RULE)), str(log))
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert result.stderr.startswith(f"ascend-doctor: error: {tmp_path / 'rules' / 'team.yaml'}")
    assert "patterns[0] cannot be compiled: the regex module failed (AttributeError" in result.stderr


def test_every_problem_of_every_rule_file_is_reported_at_once_with_its_line(tmp_path: Path) -> None:
    second = GOOD_RULE.replace("team.custom-loader-crash", "team.second").replace("rules:\n", "")
    broken = GOOD_RULE.replace("not_ascend", "gremlins").replace("(?P<shard>", "(?P<shard") + second.replace(
        "severity: error", "severity: fatal\n    colour: red"
    )
    directory = rules_dir(tmp_path, broken)
    (directory / "zz.yaml").write_text("rules: [\n", encoding="utf-8")
    log = tmp_path / "a.log"
    log.write_text("hello\n")
    result = run_cli("diagnose", "--rules", str(directory), str(log))
    assert result.exit_code == 2
    team, other = directory / "team.yaml", directory / "zz.yaml"
    lines = result.stderr.splitlines()
    assert lines[:4] == [
        f"ascend-doctor: error: {team}:3: rule team.custom-loader-crash: unknown category 'gremlins'"
        " (see ascend_doctor/rulebase/taxonomy.yaml)",
        f"{team}:8: rule team.custom-loader-crash: patterns[0] is not a valid regex:"
        " bad character in group name at position 34",
        f"{team}:14: rule team.second: 'severity' is 'fatal'; expected one of error, warning, info",
        f"{team}:15: rule team.second: unknown key 'colour' (allowed: id, category, severity, title,"
        " cause, fix, patterns, examples, confidence, kind, env, codes, sources, aliases)",
    ]
    assert lines[4].startswith(f"{other}:2: invalid YAML: ")
    assert lines[5:] == ["5 problems in 2 rule files"]


@pytest.mark.usefixtures("stopped_clock")
def test_rules_test_of_the_bundled_rules_warns_about_nothing() -> None:
    """A clean install's own rules pass without a warning (slowness aside: that is timing, the clock
    is stopped here)."""
    result = run_cli("rules", "test")
    assert result.exit_code == 0
    assert result.stderr == ""


@pytest.mark.usefixtures("stopped_clock")
@pytest.mark.parametrize(
    ("word", "warned"), [("graph", True), ("shardfault", False)], ids=["of many logs", "of this failure only"]
)
def test_a_plain_word_literal_is_common_when_other_rules_lines_hold_it(
    tmp_path: Path, word: str, warned: bool
) -> None:
    text = GOOD_RULE.replace("'ShardIndexCorrupt: (?P<shard>[\\w-]+)'", f"'\\b{word}\\b'")
    text = text.replace("ShardIndexCorrupt: part-0007", "graph shardfault: part-0007")
    result = run_cli("rules", "test", str(rules_dir(tmp_path, text)))
    assert result.exit_code == 0, result.stdout
    assert (f"common-literal: patterns[0] is looked for by '{word}'" in result.stderr) is warned


@pytest.mark.usefixtures("stopped_clock")
def test_a_common_word_before_a_code_is_not_warned_about(tmp_path: Path) -> None:
    """A line holding the word is passed over unless it holds the code too: no cost to warn of."""
    text = GOOD_RULE.replace("'ShardIndexCorrupt: (?P<shard>[\\w-]+)'", "'\\bgraph\\b\\s*507999\\b'")
    text = text.replace("ShardIndexCorrupt: part-0007", "graph 507999")
    result = run_cli("rules", "test", str(rules_dir(tmp_path, text)))
    assert result.exit_code == 0, result.stdout
    assert "common-literal" not in result.stderr


def test_duplicate_id_names_both_places(tmp_path: Path) -> None:
    directory = rules_dir(tmp_path, GOOD_RULE)
    (directory / "zz.yaml").write_text(GOOD_RULE, encoding="utf-8")
    result = run_cli("rules", "list", "--rules", str(directory))
    assert result.exit_code == 2
    assert "duplicate id" in result.stderr and "team.custom-loader-crash" in result.stderr
    assert "team.yaml:2" in result.stderr


def test_a_rules_directory_given_twice_is_loaded_once(tmp_path: Path) -> None:
    directory = rules_dir(tmp_path, GOOD_RULE)
    (tmp_path / "link").symlink_to(directory)
    log = tmp_path / "a.log"
    log.write_text("ShardIndexCorrupt: part-0042\n")
    report, result = diagnose_json("--rules", str(directory), "--rules", f"{tmp_path / 'link'}/", str(log))
    assert result.exit_code == 1, result.stderr
    assert [finding["rule_id"] for finding in report["findings"]] == ["team.custom-loader-crash"]


def test_rules_test_refuses_a_user_rule_that_reuses_a_bundled_id(tmp_path: Path) -> None:
    directory = rules_dir(
        tmp_path, GOOD_RULE.replace("team.custom-loader-crash", "memory.el0004-alloc-failed")
    )
    log = tmp_path / "a.log"
    log.write_text("hello\n")
    tested = run_cli("rules", "test", str(directory))
    diagnosed = run_cli("diagnose", "--rules", str(directory), str(log))
    assert tested.exit_code == diagnosed.exit_code == 2
    assert tested.stdout == ""
    assert tested.stderr == diagnosed.stderr
    assert tested.stderr.startswith(
        f"ascend-doctor: error: {directory / 'team.yaml'}:2: rule memory.el0004-alloc-failed:"
    )
    assert "duplicate id (first defined at " in tested.stderr and "memory.yaml" in tested.stderr


def test_rules_test_of_a_directory_runs_only_its_own_rules(tmp_path: Path) -> None:
    result = run_cli("rules", "test", str(rules_dir(tmp_path, GOOD_RULE)))
    assert result.exit_code == 0
    assert "(1 rules, 2 examples): passed" in result.stdout


def test_rules_test_of_the_bundled_directory_is_not_a_reuse_of_its_ids() -> None:
    from ascend_doctor.rulebase.load import bundled_rules_dir

    result = run_cli("rules", "test", bundled_rules_dir())
    assert result.exit_code == 0, result.stderr
    assert result.stdout == run_cli("rules", "test").stdout


def test_rules_test_of_one_bundled_rule_file_tests_that_file() -> None:
    from ascend_doctor.rulebase.load import bundled_rules_dir

    result = run_cli("rules", "test", str(Path(bundled_rules_dir()) / "hccl.yaml"))
    assert result.exit_code == 0, result.stderr
    assert "0 failed" in result.stdout and "(240 rules" not in result.stdout
