"""The Markdown report (`--format markdown`, also the GitHub job summary).

Log text and paths are untrusted: log lines go into fenced code blocks whose fence is longer than any
backtick run inside, and everything else is escaped so it cannot open Markdown or HTML constructs.
"""

from __future__ import annotations

import re
from typing import NamedTuple, TextIO

from ascend_doctor.model import Finding, InputRecord, Report
from ascend_doctor.render.advice import evidence_line, export_line, labels
from ascend_doctor.render.base import headline, verdict

_SPECIAL = re.compile(r"([\\`*_\[\]|~$])")
_CODE_SPAN = re.compile(r"(`[^`]+`)")
_BACKTICKS = re.compile(r"`+")
_NEWLINES = re.compile(r"[\r\n]+")


class Budget(NamedTuple):
    """How much evidence and how many input rows to show; None means all."""

    evidence_lines: int | None = None
    line_chars: int | None = None
    input_rows: int | None = None


# Tried in order when a size limit is set: evidence goes first, then input rows.
SHRINKING = (Budget(3, 300, 1000), Budget(1, 160, 100), Budget(0, 0, 20))


def inline(text: str) -> str:
    """Untrusted text on one line, with Markdown and HTML specials neutralised."""
    text = _NEWLINES.sub(" ", text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _SPECIAL.sub(r"\\\1", text)


def prose(text: str) -> str:
    """Rule prose: escaped like `inline`, but its `code spans` stay code."""
    parts = _CODE_SPAN.split(_NEWLINES.sub(" ", text.strip()))
    return "".join(part if index % 2 else inline(part) for index, part in enumerate(parts))


def fenced(body: str, info: str = "text") -> str:
    """A code block whose fence no backtick run in `body` can close."""
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{body}\n{fence}\n"


def _meta(finding: Finding, words: dict[str, str]) -> str:
    rule = finding.rule
    parts = [f"**{words[rule.severity.value]}**", f"`{rule.id}`", f"{words['category']} `{rule.category}`"]
    parts.append(words["confidence"].format(value=finding.confidence))
    parts.append(
        words["seen"].format(count=finding.count)
        + (" " + words["files"].format(count=len(finding.paths)) if len(finding.paths) > 1 else "")
    )
    if finding.ranks:
        parts.append("ranks " + ", ".join(str(rank) for rank in finding.ranks))
    if finding.related_to:
        parts.append(f"{words[finding.role]} `{finding.related_to}`")
    return " · ".join(parts)


def _evidence(finding: Finding, budget: Budget, label: str) -> str:
    shown = finding.evidence if budget.evidence_lines is None else finding.evidence[: budget.evidence_lines]
    lines = [evidence_line(evidence) for evidence in shown]
    if budget.line_chars is not None:
        lines = [
            line if len(line) <= budget.line_chars else line[: budget.line_chars] + "…" for line in lines
        ]
    more = finding.count - len(shown)
    tail = f"\n… and {more} more line(s)\n" if more > 0 else ""
    if not lines:
        return tail.lstrip("\n")
    body = "\n".join(lines)
    return f"**{label}:**\n\n{fenced(body)}{tail}"


def finding_block(finding: Finding, position: int, lang: str, budget: Budget) -> str:
    """One ranked cause: title, facts, cause, fix, `export` lines and fenced evidence."""
    rule = finding.rule
    words = labels(lang)
    parts = [
        f"### {position}. {prose(headline(finding, lang))}\n",
        f"{_meta(finding, words)}\n",
        f"**{words['cause']}:** {prose(rule.cause.get(lang))}\n",
        f"**{words['fix']}:** {prose(rule.fix.get(lang))}\n",
    ]
    if finding.env:
        exports = [f"{export_line(env)}  # {_NEWLINES.sub(' ', env.why.get(lang))}" for env in finding.env]
        parts.append(fenced("\n".join(exports), "sh"))
    evidence = _evidence(finding, budget, words["evidence"])
    return "\n".join([*parts, evidence] if evidence else parts)


def _input_row(record: InputRecord) -> str:
    lines = "" if record.skipped else f"{record.lines:,}"
    reason = record.reason if record.skipped else "; ".join(record.notes)
    return f"| {inline(record.path)} | {record.status} | {lines} | {inline(reason)} |"


def inputs_table(inputs: tuple[InputRecord, ...], budget: Budget) -> str:
    """Every input, read or skipped with the reason."""
    shown = inputs if budget.input_rows is None else inputs[: budget.input_rows]
    rows = ["| Input | Status | Lines | Reason / notes |", "| --- | --- | --- | --- |"]
    rows += [_input_row(record) for record in shown]
    more = f"\n… and {len(inputs) - len(shown)} more input(s)\n" if len(inputs) > len(shown) else ""
    return "### Inputs\n\n" + "\n".join(rows) + "\n" + more


def blocks(report: Report, budget: Budget, note: str = "") -> list[str]:
    """The document as self-contained Markdown blocks, so it can be cut between any two."""
    read = sum(1 for record in report.inputs if not record.skipped)
    head = f"## ascend-doctor: {inline(verdict(report))}\n"
    head += (
        f"\n{len(report.findings)} finding(s) · {read} input(s) read, {len(report.inputs) - read} skipped"
        f" · {report.rule_count} rules · ascend-doctor {inline(report.tool_version)}\n"
    )
    found = [finding_block(f, i, report.lang, budget) for i, f in enumerate(report.findings, start=1)]
    warned = [f"> Warning: {inline(warning)}\n" for warning in report.warnings]
    return [head, *([f"> {note}\n"] if note else []), *warned, *found, inputs_table(report.inputs, budget)]


def _size(parts: list[str]) -> int:
    return len("\n".join(parts).encode("utf-8"))


def fit(parts: list[str], max_bytes: int) -> list[str]:
    """Keep whole blocks from the start while they fit, and say how many were left out."""
    kept: list[str] = []
    used = 0
    for index, part in enumerate(parts):
        omitted = f"*… {len(parts) - index} more section(s) left out to stay under {max_bytes:,} bytes.*\n"
        cost = len(part.encode("utf-8")) + 1  # + the newline that joins it to the next block
        if used + cost + len(omitted.encode("utf-8")) > max_bytes:
            return [*kept, omitted]
        kept.append(part)
        used += cost
    return kept


class MarkdownRenderer:
    name = "markdown"

    def __init__(self, max_bytes: int | None = None) -> None:
        self.max_bytes = max_bytes

    def render(self, report: Report, stream: TextIO) -> None:
        stream.write("\n".join(self.document(report)))

    def document(self, report: Report) -> list[str]:
        """The full report, or, over `max_bytes`, one with evidence (then inputs) cut down."""
        parts = blocks(report, Budget())
        if self.max_bytes is None or _size(parts) <= self.max_bytes:
            return parts
        note = f"Evidence was shortened to keep this summary under {self.max_bytes:,} bytes; "
        note += "`--format json` has all of it."
        for budget in SHRINKING:
            parts = blocks(report, budget, note)
            if _size(parts) <= self.max_bytes:
                return parts
        return fit(parts, self.max_bytes)
