"""The data the pipeline passes along: rules, evidence, findings, reports. No I/O here.

Records are NamedTuples, not frozen dataclasses: immutable all the same, and creating the classes
costs a tenth of the time (twenty dataclasses were ~20 ms of every run's start-up).
"""

from __future__ import annotations

from enum import Enum
from typing import Any, NamedTuple

# What stdin is called in a report unless --stdin-name names it: a label, not a path to link to.
STDIN_LABEL = "<stdin>"


class Severity(str, Enum):
    """How bad the cause is for the job."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def weight(self) -> int:
        return {"error": 3, "warning": 2, "info": 1}[self.value]

    def fails(self, fail_on: str) -> bool:
        """Whether a finding this severe fails a run under `--fail-on` (`never`: none does)."""
        return fail_on != "never" and self.weight >= Severity(fail_on).weight


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


class Text(NamedTuple):
    """A piece of rule prose in both languages."""

    en: str
    zh: str

    def get(self, lang: str) -> str:
        return self.zh if lang == "zh" and self.zh else self.en


class EnvRemedy(NamedTuple):
    """An environment variable to set, printed as `export NAME=value`."""

    name: str
    value: str
    why: Text


class Examples(NamedTuple):
    """Lines a rule must match and near misses it must not."""

    match: tuple[str, ...]
    no_match: tuple[str, ...]


class Rule(NamedTuple):
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


class Evidence(NamedTuple):
    """One log line that a rule matched; `line` is 1-based and counts `\\n` only."""

    path: str
    line: int
    text: str
    rank: int | None = None
    timestamp: float | None = None
    captures: tuple[tuple[str, str], ...] = ()


# What a matched line is besides output of the job: the source line a traceback quotes, or prose
# that names a code (a hint, a comment, a doc line, a command that looks for it).
CODE = "code"
PROSE = "prose"
# Categories that claim no Ascend failure: a not-Ascend bug, or a run that did not fail.
NOT_A_FAILURE = ("not_ascend", "no_failure")


class Match(NamedTuple):
    """A rule firing on one line, with where it stands among all inputs, whether its match ran
    on into the next line (1) or began in the previous one (-1), and whether the line only quotes
    what it names (CODE, PROSE; "" for a line the job printed). `repeats`: the later lines of the
    same rule and rank in this input that it stands for, counted but not kept (a job that prints
    one warning every step for days must not grow the process)."""

    rule_id: str
    pattern_index: int
    evidence: Evidence
    input_index: int
    wrap: int = 0
    quoted: str = ""
    repeats: int = 0


class Raised(NamedTuple):
    """A Python exception a log shows: its line, class and message, the lines from its traceback's
    first to its message's last, the frame that raised it (`dataset.py:57`, "" when not shown),
    and the chain it belongs to ("During handling of the above exception…"; 0: none known)."""

    evidence: Evidence
    name: str
    message: str
    start: int
    end: int
    frame: str = ""
    chain: int = 0


class InputRecord(NamedTuple):
    """What happened to one input: read (with line count) or skipped (with the reason), the last
    exceptions it shows, the job's world size it states where its ranks timed out (0: none),
    which accelerator its text shows, and `node`: the machine it was read on, set when reports of
    several machines are merged."""

    path: str
    status: str
    reason: str = ""
    lines: int = 0
    size: int = 0
    notes: tuple[str, ...] = ()
    raised: tuple[Raised, ...] = ()
    world_size: int = 0
    ascend_seen: bool = False  # a sign of an Ascend NPU in its first or last bytes (a plog always)
    foreign_seen: str = ""  # the first sign there of a job elsewhere: "gpu:A100", "windows:H:\\..."
    node: str = ""

    @property
    def skipped(self) -> bool:
        return self.status == "skipped"


class Finding(NamedTuple):
    """One cause, however many lines, files and ranks show it."""

    rule: Rule
    evidence: tuple[Evidence, ...]
    count: int
    paths: tuple[str, ...]
    ranks: tuple[int, ...]
    confidence: float
    role: str = "cause"
    related_to: str | None = None
    also: tuple[str, ...] = ()
    env: tuple[EnvRemedy, ...] = ()
    earlier_run: float | None = None  # only an earlier run showed it: seconds before the latest run
    # The ranks (or, with no ranks, the files) whose timeouts waiting for it were folded into it.
    waited: tuple[int | str, ...] = ()


class Report(NamedTuple):
    """Everything a renderer needs: ranked findings, inputs, warnings. `matches` and `rules` (every
    match the ranking saw, and the rules that made them) let a report be merged with those of other
    machines and ranked again; `node` is the machine whose logs these are, `utc_offset` its zone."""

    findings: tuple[Finding, ...]
    inputs: tuple[InputRecord, ...]
    warnings: tuple[str, ...] = ()
    tool_version: str = ""
    rule_count: int = 0
    lang: str = "en"
    waited_for: tuple[int, int] | None = None
    stats: tuple[tuple[str, float], ...] = ()
    matches: tuple[Match, ...] = ()
    rules: tuple[Rule, ...] = ()
    node: str = ""
    utc_offset: str = ""


def plain(value: Any) -> Any:
    """A record as JSON-able data: NamedTuples as dicts, enums as their values, tuples as lists."""
    if hasattr(value, "_asdict"):
        return {key: plain(item) for key, item in value._asdict().items()}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple):
        return [plain(item) for item in value]
    return value
