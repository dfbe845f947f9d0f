"""GitHub Actions workflow commands (`--format github`): one annotation per finding, log text fenced.

Log lines are echoed only between `::stop-commands::TOKEN` and `::TOKEN::` with a fresh random token,
so a line such as `::add-mask::x` or `::set-env name=X::1` in a log can never act as a command.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from ascend_doctor.model import STDIN_LABEL, Finding, Report
from ascend_doctor.render.advice import advice_lines, evidence_line, labels
from ascend_doctor.render.base import headline, verdict

MAX_ANNOTATIONS = 10
GROUP_OVER = 3
COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    """Percent-encode what would end or corrupt a command's message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Percent-encode a property value; `:` and `,` would end it early."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, properties: dict[str, str] | None = None) -> str:
    """`::name key=value,...::message`, everything escaped."""
    props = ",".join(f"{key}={escape_property(value)}" for key, value in (properties or {}).items())
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def annotation(finding: Finding, lang: str) -> str:
    """The finding's title, cause, fix and env remedies, placed on its first evidence line. Piped
    input is no file of the repository (unless --stdin-name names one): its title says "stdin"."""
    properties = {"title": headline(finding, lang)}
    if finding.evidence:
        first = finding.evidence[0]
        if first.path == STDIN_LABEL:
            where = labels(lang)["stdin_line"].format(line=first.line)
            properties["title"] += f" ({where})" if lang != "zh" else f"（{where}）"
        else:
            properties = {"file": first.path, "line": str(first.line), **properties}
    message = "\n".join(advice_lines(finding, lang))
    return command(COMMANDS[finding.rule.severity.value], message, properties)


@contextmanager
def commands_stopped(stream: TextIO) -> Iterator[None]:
    """Whatever is written inside is plain text to the Actions runner, whatever it holds."""
    token = secrets.token_hex(16)
    stream.write(f"::stop-commands::{token}\n")
    try:
        yield
    finally:
        stream.write(f"::{token}::\n")


def evidence_block(finding: Finding, position: int, lang: str, token: str) -> list[str]:
    """The evidence lines inside a stop-commands fence, folded into a group when long."""
    header = f"{position}. {headline(finding, lang)} ({finding.rule.id})"
    fenced = [f"::stop-commands::{token}", *map(evidence_line, finding.evidence), f"::{token}::"]
    if len(finding.evidence) > GROUP_OVER:
        return [
            command("group", f"{header}: {len(finding.evidence)} evidence lines"),
            *fenced,
            "::endgroup::",
        ]
    return [escape_data(header), *fenced]


class GithubRenderer:
    name = "github"

    def render(self, report: Report, stream: TextIO) -> None:
        lines = self.annotations(report)
        lines += [command("warning", warning, {"title": "ascend-doctor"}) for warning in report.warnings]
        token = secrets.token_hex(16)
        for position, finding in enumerate(report.findings, start=1):
            if finding.evidence:
                lines += evidence_block(finding, position, report.lang, token)
        stream.write("".join(f"{line}\n" for line in lines))

    @staticmethod
    def annotations(report: Report) -> list[str]:
        """At most MAX_ANNOTATIONS, best first; the rest named on one plain line."""
        if not report.findings:
            return [command("notice", verdict(report), {"title": "ascend-doctor"})]
        shown = report.findings[:MAX_ANNOTATIONS]
        lines = [annotation(finding, report.lang) for finding in shown]
        rest = report.findings[MAX_ANNOTATIONS:]
        if rest:
            names = ", ".join(finding.rule.id for finding in rest)
            lines.append(
                f"ascend-doctor: {len(rest)} more finding(s) not annotated "
                f"(see the job summary or --format json): {escape_data(names)}"
            )
        return lines
