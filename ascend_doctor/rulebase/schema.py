"""The rule schema: turns one parsed YAML mapping into a validated Rule, or names what is wrong."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import regex

from ascend_doctor.errors import RuleError, RuleErrors
from ascend_doctor.model import Confidence, EnvRemedy, Examples, Kind, Rule, Severity, Text
from ascend_doctor.rulebase.taxonomy import categories

REQUIRED_KEYS = ("id", "category", "severity", "title", "cause", "fix", "patterns", "examples")
OPTIONAL_KEYS = ("confidence", "kind", "env", "codes", "sources", "aliases")
ID_PATTERN = regex.compile(r"[a-z0-9_]+\.[a-z0-9]+(?:[-_][a-z0-9]+)*")
ENV_NAME_PATTERN = regex.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_PATTERN_LENGTH = 2000


def _scalar(value: Any) -> Any:
    """Codes such as 507015 arrive from YAML as numbers; they are strings to us."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


class _Checker:
    """Validates the fields of one rule; every problem names file, line and rule id. A field that
    is wrong is recorded and the others are still checked, so one run lists them all."""

    def __init__(self, raw: Any, path: str) -> None:
        self.path = path
        self.line = getattr(raw, "line", 0)
        self.rule_id = raw.get("id", "") if isinstance(raw, dict) else ""
        if not isinstance(self.rule_id, str):
            self.rule_id = str(self.rule_id)
        self.raw = raw
        self.problems: list[RuleError] = []
        self.key = ""  # the key being checked: its line is the problem's line

    def fail(self, message: str) -> RuleError:
        line = getattr(self.raw, "key_lines", {}).get(self.key, self.line)
        return RuleError(self.path, line, message, self.rule_id)

    def field(self, key: str, read: Callable[[], Any]) -> Any:
        """`read()`, or None with its problem recorded (or with none, when the key is missing:
        that is already said)."""
        if key not in self.raw and key in REQUIRED_KEYS:
            return None
        self.key = key
        try:
            return read()
        except RuleError as problem:
            self.problems.append(problem)
            return None

    def keys(self) -> None:
        if not isinstance(self.raw, dict):
            raise self.fail("a rule must be a mapping of keys to values")
        allowed = ", ".join(REQUIRED_KEYS + OPTIONAL_KEYS)
        for unknown in sorted(set(self.raw) - set(REQUIRED_KEYS) - set(OPTIONAL_KEYS), key=str):
            self.key = unknown
            self.problems.append(self.fail(f"unknown key {unknown!r} (allowed: {allowed})"))
        self.key = ""
        for missing in (key for key in REQUIRED_KEYS if key not in self.raw):
            self.problems.append(self.fail(f"missing required key {missing!r}"))

    def string(self, key: str, value: Any) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(f"{key!r} must be a non-empty string")
        return value

    def strings(self, key: str, value: Any, *, required: bool) -> tuple[str, ...]:
        if value is None and not required:
            return ()
        if not isinstance(value, list) or (required and not value):
            raise self.fail(f"{key!r} must be a {'non-empty ' if required else ''}list of strings")
        return tuple(self.string(f"{key}[{i}]", _scalar(item)) for i, item in enumerate(value))

    def text(self, key: str, value: Any) -> Text:
        if isinstance(value, str):
            return Text(en=self.string(key, value), zh="")
        if not isinstance(value, dict) or set(value) - {"en", "zh"} or "en" not in value:
            raise self.fail(f"{key!r} must be a string or a mapping with 'en' and 'zh'")
        zh = self.string(f"{key}.zh", value["zh"]) if "zh" in value else ""
        return Text(en=self.string(f"{key}.en", value["en"]), zh=zh)

    def choice(self, key: str, enum: Any, default: Any) -> Any:
        value = self.raw.get(key, default.value)
        allowed = [member.value for member in enum]
        if value not in allowed:
            raise self.fail(f"{key!r} is {value!r}; expected one of {', '.join(allowed)}")
        return enum(value)

    def identity(self) -> str:
        rule_id = self.string("id", self.raw["id"])
        if not ID_PATTERN.fullmatch(rule_id):
            raise self.fail(f"id {rule_id!r} must look like 'area.kebab-slug' (lowercase)")
        return rule_id

    def category(self) -> str:
        category = self.raw["category"]
        if not isinstance(category, str) or category not in categories():
            raise self.fail(f"unknown category {category!r} (see ascend_doctor/rulebase/taxonomy.yaml)")
        return category

    def patterns(self) -> tuple[str, ...]:
        patterns = self.strings("patterns", self.raw["patterns"], required=True)
        for index, pattern in enumerate(patterns):
            try:
                self.pattern(index, pattern)
            except RuleError as problem:  # the next pattern may be wrong too
                self.problems.append(problem)
        return patterns

    def pattern(self, index: int, pattern: str) -> None:
        if len(pattern) > MAX_PATTERN_LENGTH:
            raise self.fail(f"patterns[{index}] is longer than {MAX_PATTERN_LENGTH} characters")
        try:
            regex.compile(pattern)
        except (regex.error, OverflowError, RecursionError) as exc:
            raise self.fail(f"patterns[{index}] is not a valid regex: {exc}") from None
        except Exception as exc:  # `regex` fails on some odd patterns: `(?i)[^\s\S]`, AttributeError
            failure = f"the regex module failed ({type(exc).__name__}: {exc})"
            raise self.fail(f"patterns[{index}] cannot be compiled: {failure}") from None

    def examples(self) -> Examples:
        value = self.raw["examples"]
        if not isinstance(value, dict) or set(value) - {"match", "no_match"}:
            raise self.fail("'examples' must be a mapping with 'match' and 'no_match' lists")
        return Examples(
            match=self.strings("examples.match", value.get("match"), required=True),
            no_match=self.strings("examples.no_match", value.get("no_match"), required=True),
        )

    def env(self) -> tuple[EnvRemedy, ...]:
        value = self.raw.get("env") or []
        if not isinstance(value, list):
            raise self.fail("'env' must be a list of {name, value, why}")
        remedies = []
        for index, item in enumerate(value):
            key = f"env[{index}]"
            if not isinstance(item, dict) or set(item) != {"name", "value", "why"}:
                raise self.fail(f"{key} must have exactly the keys name, value, why")
            name = self.string(f"{key}.name", item["name"])
            if not ENV_NAME_PATTERN.fullmatch(name):
                raise self.fail(f"{key}.name {name!r} is not an environment variable name")
            setting = item["value"]
            if isinstance(setting, bool) or not isinstance(setting, (str, int, float)):
                raise self.fail(f'{key}.value must be a string (quote it, e.g. "1")')
            why = self.text(f"{key}.why", item["why"])
            remedies.append(EnvRemedy(name=name, value=str(setting), why=why))
        return tuple(remedies)


def parse_rule(raw: Any, path: str) -> Rule:
    """Validate one rule mapping from `path`; raises RuleErrors naming every problem (file, line, id)."""
    check = _Checker(raw, path)
    try:
        check.keys()
    except RuleError as problem:
        raise RuleErrors([problem]) from None
    readers: dict[str, Callable[[], Any]] = {
        "id": check.identity,
        "category": check.category,
        "severity": lambda: check.choice("severity", Severity, Severity.ERROR),
        "confidence": lambda: check.choice("confidence", Confidence, Confidence.MEDIUM),
        "kind": lambda: check.choice("kind", Kind, Kind.CAUSE),
        "title": lambda: check.text("title", raw["title"]),
        "cause": lambda: check.text("cause", raw["cause"]),
        "fix": lambda: check.text("fix", raw["fix"]),
        "env": check.env,
        "patterns": check.patterns,
        "examples": check.examples,
        "codes": lambda: check.strings("codes", raw.get("codes"), required=False),
        "sources": lambda: check.strings("sources", raw.get("sources"), required=False),
        "aliases": lambda: check.strings("aliases", raw.get("aliases"), required=False),
    }
    fields = {key: check.field(key, read) for key, read in readers.items()}
    if check.problems:
        raise RuleErrors(check.problems)
    return Rule(**fields, path=path, line=check.line)
