"""The terminal report: the verdict first, then ranked causes with fix, env remedies and evidence.

Log text is printed as plain `Text`, never parsed as markup: `[ERROR]` and `[bold]` stay literal.
"""

from __future__ import annotations

from typing import TextIO

from rich.console import Console
from rich.text import Text

from ascend_doctor.model import Finding, Report
from ascend_doctor.render.base import LABELS, printable, verdict

DETAILED = 3
EVIDENCE_SHOWN = 5
SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


class TextRenderer:
    name = "text"

    def __init__(self, color: bool = False, width: int = 0) -> None:
        self.color = color
        self.width = width

    def _console(self, stream: TextIO) -> Console:
        return Console(
            file=stream,
            no_color=not self.color,
            color_system="auto" if self.color else None,
            markup=False,
            highlight=False,
            emoji=False,
            soft_wrap=not self.color,
            width=self.width or None,
        )

    def render(self, report: Report, stream: TextIO) -> None:
        console = self._console(stream)
        labels = LABELS.get(report.lang, LABELS["en"])
        headline = Text(f"{labels['diagnosis']}: ", style="bold")
        headline.append(printable(verdict(report)), style="bold red" if report.findings else "bold green")
        console.print(headline)
        for position, finding in enumerate(report.findings, start=1):
            console.print()
            detailed = position <= DETAILED and finding.role == "cause"
            self._finding(console, finding, position, detailed, report, labels)
        console.print()
        console.print(Text(self._footer(report, labels), style="dim"))

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
        self,
        console: Console,
        finding: Finding,
        position: int,
        detailed: bool,
        report: Report,
        labels: dict[str, str],
    ) -> None:
        rule = finding.rule
        lang = report.lang
        head = Text(f"{position}. ", style="bold")
        head.append(rule.title.get(lang), style="bold")
        if finding.related_to:
            head.append(f"  ({labels[finding.role]} {finding.related_to})", style="dim")
        console.print(head)
        meta = Text("   ")
        meta.append(rule.severity.value, style=SEVERITY_STYLE[rule.severity.value])
        facts = (rule.category, rule.id, f"confidence {finding.confidence:.2f}", _seen(finding, labels))
        meta.append(" · " + " · ".join(facts), style="dim")
        console.print(meta)
        if detailed:
            self._details(console, finding, labels, lang)
        self._evidence(console, finding, labels, EVIDENCE_SHOWN if detailed else 2)

    @staticmethod
    def _details(console: Console, finding: Finding, labels: dict[str, str], lang: str) -> None:
        rule = finding.rule
        for label, body, style in ((labels["cause"], rule.cause, ""), (labels["fix"], rule.fix, "green")):
            line = Text(f"   {label}: ", style="bold")
            line.append(body.get(lang).strip(), style=style)
            console.print(line)
        for remedy in finding.env:
            line = Text(f"   {labels['env']}: ", style="bold")
            line.append(f"export {remedy.name}={printable(remedy.value)}", style="bold green")
            line.append(f"   # {remedy.why.get(lang)}", style="dim")
            console.print(line)

    @staticmethod
    def _evidence(console: Console, finding: Finding, labels: dict[str, str], shown_count: int) -> None:
        shown = finding.evidence[:shown_count]
        console.print(Text(f"   {labels['evidence']}:", style="bold"))
        for evidence in shown:
            line = Text(f"     {printable(evidence.path)}:{evidence.line}", style="cyan")
            if evidence.rank is not None:
                line.append(f" [rank {evidence.rank}]", style="dim")
            line.append("  ")
            line.append(printable(evidence.text))
            console.print(line)
        if finding.count > len(shown):
            console.print(
                Text(f"     {labels['more'].format(count=finding.count - len(shown))}", style="dim")
            )


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
