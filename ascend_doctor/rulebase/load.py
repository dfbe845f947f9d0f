"""Load the bundled rules and any `--rules` directories, validated, with no duplicate ids."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from ascend_doctor.cache import read_cache, write_cache
from ascend_doctor.errors import RuleError, RuleErrors
from ascend_doctor.model import Rule

RULE_SUFFIXES = (".yaml", ".yml")
MAX_RULE_FILE = 4 * 1024 * 1024


class RuleBase(NamedTuple):
    """All loaded rules, in load order, with a lookup by id and alias."""

    rules: tuple[Rule, ...]
    files: tuple[str, ...]
    use_cache: bool = True  # False under --no-cache: the matcher then builds its index afresh

    def find(self, rule_id: str) -> Rule | None:
        for rule in self.rules:
            if rule.id == rule_id or rule_id in rule.aliases:
                return rule
        return None


# Paths are plain strings here, not pathlib: this module is on every run's start-up path.


def bundled_rules_dir() -> str:
    """The rules shipped in the wheel (`ascend_doctor/rulebase/rules`), or `rules/` beside the
    package in a source checkout."""
    here = os.path.dirname(os.path.realpath(__file__))
    installed = os.path.join(here, "rules")
    checkout = os.path.dirname(os.path.dirname(here))
    return installed if os.path.isdir(installed) else os.path.join(checkout, "rules")


def rule_files(directory: str) -> list[str]:
    """The rule files of one directory (or a single file), sorted."""
    if os.path.isfile(directory):
        return [directory]
    if not os.path.isdir(directory):
        raise RuleError(directory, 0, "rules directory not found")
    names = sorted(name for name in os.listdir(directory) if os.path.splitext(name)[1] in RULE_SUFFIXES)
    files = [os.path.join(directory, name) for name in names]
    for path in files:
        if os.path.isdir(path):
            raise RuleError(path, 0, "is a directory, not a rule file")
    return [path for path in files if os.path.isfile(path)]


def load_file(path: str) -> list[Rule]:
    """Parse and validate one rule file; raises RuleErrors naming every problem of its rules (or
    the one that stops it being read: unreadable, not UTF-8, not YAML, not a list of rules)."""
    try:
        document = _read_document(path)
    except RuleError as problem:
        raise RuleErrors([problem]) from None
    if document is None:
        return []
    from ascend_doctor.rulebase.schema import parse_rule

    rules: list[Rule] = []
    problems: list[RuleError] = []
    for raw in document["rules"]:
        try:
            rules.append(parse_rule(raw, str(path)))
        except RuleErrors as found:
            problems.extend(found.problems)
    if problems:
        raise RuleErrors(sorted(problems, key=lambda problem: problem.line))
    return rules


def _read_document(path: str) -> Any:
    """The file's YAML document: a mapping whose one key, `rules`, is a list (None when empty)."""
    import yaml  # only when the cache misses: importing PyYAML costs start-up time

    from ascend_doctor.rulebase.yamlfile import error_line, load_yaml

    label = str(path)
    try:
        if os.path.getsize(path) > MAX_RULE_FILE:
            raise RuleError(label, 0, f"rule file is larger than {MAX_RULE_FILE // 1024**2} MiB")
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise RuleError(label, 0, f"cannot read rule file: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        byte = data[exc.start]
        raise RuleError(label, line, f"rule files must be UTF-8 text; byte 0x{byte:02x} is not") from None
    try:
        document = load_yaml(text)
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise RuleError(label, error_line(exc), f"invalid YAML: {problem}") from None
    except RecursionError:
        raise RuleError(label, 0, "invalid YAML: nested too deeply") from None
    if document is None:
        return None
    if not isinstance(document, dict) or set(document) != {"rules"}:
        raise RuleError(label, 1, "a rule file is a mapping with one key, 'rules'")
    if not isinstance(document["rules"], list):
        raise RuleError(label, getattr(document, "line", 1), "'rules' must be a list")
    return document


def _merge(files: Iterable[str]) -> RuleBase:
    """Every file's rules; the problems of all files (and ids defined twice) are raised together."""
    rules: list[Rule] = []
    seen: dict[str, Rule] = {}
    loaded: list[str] = []
    problems: list[RuleError] = []
    for path in files:
        loaded.append(str(path))
        try:
            found = load_file(path)
        except RuleErrors as broken:
            problems.extend(broken.problems)
            continue
        for rule in found:
            for key in (rule.id, *rule.aliases):
                if key in seen:
                    first = seen[key]
                    where = f"first defined at {first.path}:{first.line}"
                    problems.append(RuleError(rule.path, rule.line, f"duplicate id ({where})", key))
                seen.setdefault(key, rule)
            rules.append(rule)
    if problems:
        raise RuleErrors(problems)
    return RuleBase(rules=tuple(rules), files=tuple(loaded))


def _rule_files_key(files: Sequence[str]) -> str | None:
    """The rule files as they are now (None if one cannot be read: nothing is cached)."""
    parts = []
    for path in files:
        try:
            stat = os.stat(path)
        except OSError:
            return None
        parts.append(f"{os.path.realpath(path)}|{stat.st_mtime_ns}|{stat.st_size}")
    return "\x00".join(parts)


def load_rulebase(
    extra_dirs: Sequence[str] = (), *, bundled: bool = True, use_cache: bool = True
) -> RuleBase:
    """The bundled rules (unless `bundled` is False) plus every rule file in `extra_dirs`."""
    files: list[str] = []
    if bundled:
        files.extend(rule_files(bundled_rules_dir()))
    for directory in extra_dirs:
        files.extend(rule_files(directory))
    if extra_dirs:  # a file given twice (the same --rules twice, or through a link) is one file
        unique: dict[str, str] = {}
        for path in files:
            unique.setdefault(os.path.realpath(path), path)
        files = list(unique.values())
    key = _rule_files_key(files) if use_cache else None
    if key is not None:
        cached = read_cache("rules", key)
        if isinstance(cached, RuleBase):
            return cached
    rulebase = _merge(files)
    if key is not None:
        write_cache("rules", key, rulebase)
    return rulebase if use_cache else RuleBase(rulebase.rules, rulebase.files, use_cache=False)
