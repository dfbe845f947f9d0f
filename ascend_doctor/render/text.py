"""The terminal report: the verdict first, then ranked causes with fix, env remedies and evidence.

Log text is printed as plain `Text`, never parsed as markup: `[ERROR]` and `[bold]` stay literal.
"""

from __future__ import annotations

from typing import TextIO

from ascend_doctor.model import Finding, Report
from ascend_doctor.render.base import LABELS, headline, printable, verdict

DETAILED = 3
EVIDENCE_SHOWN = 5
SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


Line = list[tuple[str, str]]  # (text, rich style) pieces; "" is no style


class TextRenderer:
    """Plain lines into a pipe or file; through `rich` (colour, wrapped to the terminal) when
    colour is on. `rich` is imported only then: it costs ~30 ms of start-up."""

    name = "text"

    def __init__(self, color: bool = False, width: int = 0) -> None:
        self.color = color
        self.width = width

    def render(self, report: Report, stream: TextIO) -> None:
        lines = self.lines(report)
        if self.color:
            _print_styled(lines, stream, self.width)
        else:
            stream.write("".join("".join(text for text, _style in line) + "\n" for line in lines))

    def lines(self, report: Report) -> list[Line]:
        labels = LABELS.get(report.lang, LABELS["en"])
        style = "bold red" if report.findings else "bold green"
        head = labels["diagnosis"] + labels["colon"]
        lines: list[Line] = [[(head, "bold"), (printable(verdict(report)), style)]]
        for position, finding in enumerate(report.findings, start=1):
            lines.append([])
            detailed = position <= DETAILED and finding.role == "cause"
            lines += self._finding(finding, position, detailed, report, labels)
        lines += [[], [(self._footer(report, labels), "dim")]]
        return lines

    @staticmethod
    def _footer(report: Report, labels: dict[str, str]) -> str:
        read = [record for record in report.inputs if not record.skipped]
        footer = labels["footer"].format(
            version=report.tool_version,
            inputs=len(read),
            lines=sum(record.lines for record in read),
            rules=report.rule_count,
        )
        skipped = len(report.inputs) - len(read)
        return footer + (labels["skipped"].format(count=skipped) if skipped else "")

    def _finding(
        self, finding: Finding, position: int, detailed: bool, report: Report, labels: dict[str, str]
    ) -> list[Line]:
        rule = finding.rule
        lang = report.lang
        head: Line = [(f"{position}. ", "bold"), (headline(finding, lang), "bold")]
        if finding.related_to:
            head.append((f"  ({labels[finding.role]} {finding.related_to})", "dim"))
        confidence = labels["confidence"].format(value=finding.confidence)
        facts = (rule.category, rule.id, confidence, _seen(finding, labels))
        meta: Line = [
            ("   ", ""),
            (labels[rule.severity.value], SEVERITY_STYLE[rule.severity.value]),
            (" · " + " · ".join(facts), "dim"),
        ]
        lines = [head, meta]
        if detailed:
            lines += self._details(finding, labels, lang)
        return lines + self._evidence(finding, labels, EVIDENCE_SHOWN if detailed else 2)

    @staticmethod
    def _details(finding: Finding, labels: dict[str, str], lang: str) -> list[Line]:
        rule = finding.rule
        lines: list[Line] = [
            [(f"   {label}{labels['colon']}", "bold"), (body.get(lang).strip(), style)]
            for label, body, style in ((labels["cause"], rule.cause, ""), (labels["fix"], rule.fix, "green"))
        ]
        for remedy in finding.env:
            lines.append(
                [
                    (f"   {labels['env']}{labels['colon']}", "bold"),
                    (f"export {remedy.name}={printable(remedy.value)}", "bold green"),
                    (f"   # {remedy.why.get(lang)}", "dim"),
                ]
            )
        return lines

    @staticmethod
    def _evidence(finding: Finding, labels: dict[str, str], shown_count: int) -> list[Line]:
        shown = finding.evidence[:shown_count]
        lines: list[Line] = [[(f"   {labels['evidence']}{labels['colon'].rstrip()}", "bold")]]
        for evidence in shown:
            line: Line = [(f"     {printable(evidence.path)}:{evidence.line}", "cyan")]
            if evidence.rank is not None:
                line.append((f" [rank {evidence.rank}]", "dim"))
            lines.append([*line, ("  ", ""), (printable(evidence.text), "")])
        if finding.count > len(shown):
            lines.append([(f"     {labels['more'].format(count=finding.count - len(shown))}", "dim")])
        return lines


def _print_styled(lines: list[Line], stream: TextIO, width: int) -> None:
    """Log text goes in as plain `Text`, never parsed as markup: `[ERROR]` stays literal."""
    from rich.console import Console
    from rich.text import Text

    # Colour was asked for (a terminal, or --color): forced, even into a pipe or a file and with
    # NO_COLOR set, which the caller has already weighed (rich would drop it). Only a terminal
    # wraps the lines.
    terminal = stream.isatty()
    console = Console(
        file=stream,
        no_color=False,
        color_system="auto" if terminal else "standard",
        markup=False,
        highlight=False,
        emoji=False,
        width=width or None,
    )
    for line in lines:
        console.print(Text.assemble(*line), soft_wrap=not terminal)


def _seen(finding: Finding, labels: dict[str, str]) -> str:
    parts = [labels["seen"].format(count=finding.count)]
    if len(finding.paths) > 1:
        parts.append(labels["files"].format(count=len(finding.paths)))
    if finding.ranks:
        shown = ", ".join(str(rank) for rank in finding.ranks[:8])
        more = f" (+{len(finding.ranks) - 8})" if len(finding.ranks) > 8 else ""
        parts.append(f"rank{'s' if len(finding.ranks) > 1 else ''} {shown}{more}")
    if finding.also:
        parts.append(f"({labels['also'].format(ids=', '.join(finding.also))})")
    return " ".join(parts)
