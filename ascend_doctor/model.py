"""The data the pipeline passes along: rules, evidence, findings, reports. No I/O here."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Severity(str, Enum):
    """How bad the cause is for the job."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def weight(self) -> int:
        return {"error": 3, "warning": 2, "info": 1}[self.value]


class Confidence(str, Enum):
    """How specific the rule's patterns are."""

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"

    @property
    def score(self) -> float:
        return {"high": 0.9, "medium": 0.7, "low": 0.4}[self.value]


class Kind(str, Enum):
    """A cause explains the failure; a symptom is what some other cause prints."""

    CAUSE = "cause"
    SYMPTOM = "symptom"


@dataclass(frozen=True)
class Text:
    """A piece of rule prose in both languages."""

    en: str
    zh: str

    def get(self, lang: str) -> str:
        return self.zh if lang == "zh" and self.zh else self.en


@dataclass(frozen=True)
class EnvRemedy:
    """An environment variable to set, printed as `export NAME=value`."""

    name: str
    value: str
    why: Text


@dataclass(frozen=True)
class Examples:
    """Lines a rule must match and near misses it must not."""

    match: tuple[str, ...]
    no_match: tuple[str, ...]


@dataclass(frozen=True)
class Rule:
    """One error signature of the rule base, as loaded and validated."""

    id: str
    category: str
    severity: Severity
    confidence: Confidence
    kind: Kind
    title: Text
    cause: Text
    fix: Text
    env: tuple[EnvRemedy, ...]
    patterns: tuple[str, ...]
    examples: Examples
    codes: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    path: str = ""
    line: int = 0


@dataclass(frozen=True)
class Evidence:
    """One log line that a rule matched; `line` is 1-based and counts `\\n` only."""

    path: str
    line: int
    text: str
    rank: int | None = None
    timestamp: float | None = None
    captures: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Match:
    """A rule firing on one line, with where it stands among all inputs."""

    rule_id: str
    pattern_index: int
    evidence: Evidence
    input_index: int


@dataclass(frozen=True)
class InputRecord:
    """What happened to one input: read (with line count) or skipped (with the reason)."""

    path: str
    status: str
    reason: str = ""
    lines: int = 0
    size: int = 0
    notes: tuple[str, ...] = ()

    @property
    def skipped(self) -> bool:
        return self.status == "skipped"


@dataclass(frozen=True)
class Finding:
    """One cause, however many lines, files and ranks show it."""

    rule: Rule
    evidence: tuple[Evidence, ...]
    count: int
    paths: tuple[str, ...]
    ranks: tuple[int, ...]
    confidence: float
    role: str = "cause"
    related_to: str | None = None
    fingerprint: str = ""
    also: tuple[str, ...] = ()
    env: tuple[EnvRemedy, ...] = ()


@dataclass(frozen=True)
class Report:
    """Everything a renderer needs: ranked findings, inputs, warnings."""

    findings: tuple[Finding, ...]
    inputs: tuple[InputRecord, ...]
    warnings: tuple[str, ...] = ()
    tool_version: str = ""
    rule_count: int = 0
    lang: str = "en"
    waited_for: tuple[int, int] | None = None
    stats: tuple[tuple[str, float], ...] = field(default=())
