"""What every renderer shares: the interface and the one-line verdict."""

from __future__ import annotations

from typing import Protocol, TextIO

from ascend_doctor.model import Finding, Report


class Renderer(Protocol):
    """Formats a report; no filtering, exit codes or environment reads."""

    name: str

    def render(self, report: Report, stream: TextIO) -> None: ...


def where(finding: Finding) -> str:
    """`rank5.log:7 (rank 5)` for the first evidence line of a finding."""
    first = finding.evidence[0]
    rank = f" (rank {first.rank})" if first.rank is not None else ""
    return f"{first.path}:{first.line}{rank}"


def spread(report: Report) -> str:
    """For a multi-rank job: where the top cause started and how many ranks waited for it."""
    if not report.findings:
        return ""
    top = report.findings[0]
    if top.rule.category == "hccl_timeout":
        return _waiting_only(report, top)
    first = top.evidence[0]
    victims: set[object] = set()
    for finding in report.findings[1:]:
        if finding.role == "consequence":
            victims.update(finding.ranks or finding.paths)
    victims.discard(first.rank)
    victims.discard(first.path)
    if not victims:
        return ""
    unit = "ranks" if any(isinstance(v, int) for v in victims) else "files"
    origin = f"rank {first.rank} ({first.path}:{first.line})" if first.rank is not None else where(top)
    return f"started on {origin}; {len(victims)} other {unit} timed out waiting for it"


def _waiting_only(report: Report, top: Finding) -> str:
    """Only timeouts were found: name the rank they waited for, whose own error is not here."""
    if report.waited_for is None:
        return ""
    peer, count = report.waited_for
    waiting = len(top.ranks) or len(top.paths)
    return (
        f"{waiting} rank(s) timed out waiting for rank {peer} (named in {count} line(s)); "
        f"its own error is not in these logs: diagnose rank {peer}'s log and plog"
    )


def verdict(report: Report) -> str:
    """One line saying what went wrong, or that nothing Ascend-related was found."""
    if not report.findings:
        return "No known Ascend failure cause found."
    top = report.findings[0]
    title = top.rule.title.get(report.lang)
    if top.rule.category == "not_ascend":
        return f"This is not an Ascend failure: {title}."
    if top.rule.category == "no_failure":
        return f"No failure: {title}."
    started = spread(report)
    return f"{title} — {started}" if started else f"{title} ({where(top)})"
