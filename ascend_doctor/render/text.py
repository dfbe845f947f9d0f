"""The terminal report: ranked causes with fix, env remedies and evidence. Log text is never markup."""

from __future__ import annotations

from typing import TextIO

from rich.console import Console
from rich.text import Text

from ascend_doctor.model import Finding, Report
from ascend_doctor.render.base import spread, verdict

DETAILED = 3
EVIDENCE_SHOWN = 5
LABELS = {
    "en": {
        "cause": "Cause",
        "fix": "Fix",
        "env": "Env",
        "evidence": "Evidence",
        "of": "consequence of",
        "symptom": "symptom of",
    },
    "zh": {
        "cause": "原因",
        "fix": "修复",
        "env": "环境变量",
        "evidence": "证据",
        "of": "由此引起：",
        "symptom": "症状，源自",
    },
}
SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def _seen(finding: Finding) -> str:
    parts = [f"seen {finding.count}×"]
    if len(finding.paths) > 1:
        parts.append(f"in {len(finding.paths)} files")
    if finding.ranks:
        shown = ", ".join(str(rank) for rank in finding.ranks[:8])
        more = f" (+{len(finding.ranks) - 8})" if len(finding.ranks) > 8 else ""
        parts.append(f"rank{'s' if len(finding.ranks) > 1 else ''} {shown}{more}")
    if finding.also:
        parts.append(f"(also matched: {', '.join(finding.also)})")
    return " ".join(parts)


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
        read = [record for record in report.inputs if not record.skipped]
        lines = sum(record.lines for record in read)
        console.print(
            Text(
                f"ascend-doctor {report.tool_version}: {len(read)} input(s), {lines:,} lines, "
                f"{report.rule_count} rules",
                style="dim",
            )
        )
        for position, finding in enumerate(report.findings, start=1):
            console.print()
            self._finding(
                console,
                finding,
                position,
                position <= DETAILED and finding.role == "cause",
                report,
                labels,
            )
        console.print()
        summary = Text("Diagnosis: ", style="bold")
        summary.append(verdict(report))
        console.print(summary)

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
            relation = labels["of"] if finding.role == "consequence" else labels["symptom"]
            head.append(f"  ({relation} {finding.related_to})", style="dim")
        console.print(head)
        meta = Text("   ")
        meta.append(rule.severity.value, style=SEVERITY_STYLE[rule.severity.value])
        meta.append(
            f" · {rule.category} · {rule.id} · confidence {finding.confidence:.2f} · {_seen(finding)}",
            style="dim",
        )
        console.print(meta)
        if position == 1:
            started = spread(report)
            if started:
                console.print(Text(f"   {started[0].upper()}{started[1:]}.", style="bold"))
        if detailed:
            self._prose(console, f"{labels['cause']}:", rule.cause.get(lang))
            self._prose(console, f"{labels['fix']}:", rule.fix.get(lang), style="green")
            for remedy in rule.env:
                line = Text(f"   {labels['env']}: ", style="bold")
                line.append(f"export {remedy.name}={remedy.value}", style="bold green")
                line.append(f"   # {remedy.why.get(lang)}", style="dim")
                console.print(line)
        shown = finding.evidence[: EVIDENCE_SHOWN if detailed else 2]
        console.print(Text(f"   {labels['evidence']}:", style="bold"))
        for evidence in shown:
            line = Text(f"     {evidence.path}:{evidence.line}", style="cyan")
            if evidence.rank is not None:
                line.append(f" [rank {evidence.rank}]", style="dim")
            line.append("  ")
            line.append(evidence.text)
            console.print(line)
        if finding.count > len(shown):
            console.print(Text(f"     … and {finding.count - len(shown)} more line(s)", style="dim"))

    @staticmethod
    def _prose(console: Console, label: str, body: str, style: str = "") -> None:
        line = Text(f"   {label} ", style="bold")
        line.append(body.strip(), style=style)
        console.print(line)
