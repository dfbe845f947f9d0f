"""Plain-text pieces the CI formats share: a finding's advice, `export` lines, evidence lines."""

from __future__ import annotations

import hashlib
import shlex

from ascend_doctor.model import EnvRemedy, Evidence, Finding
from ascend_doctor.regexes import regex
from ascend_doctor.render.base import LABELS, headline

_HEX = regex(r"0x[0-9a-fA-F]+")
_NUMBERS = regex(r"\d+")
_SPACE = regex(r"\s+")


def labels(lang: str) -> dict[str, str]:
    """The words `Cause`, `Fix`, `Env`, `Evidence` in the report's language."""
    return LABELS.get(lang, LABELS["en"])


def export_line(remedy: EnvRemedy) -> str:
    """`export NAME=value`, quoted so it can be pasted into a shell as is."""
    return f"export {remedy.name}={shlex.quote(remedy.value)}"


def advice_lines(finding: Finding, lang: str) -> list[str]:
    """Title, cause, fix and `export` remedies, one labelled line each."""
    rule = finding.rule
    words = labels(lang)
    lines = [
        headline(finding, lang),
        f"{words['cause']}{words['colon']}{rule.cause.get(lang).strip()}",
        f"{words['fix']}{words['colon']}{rule.fix.get(lang).strip()}",
    ]
    for env in finding.env:
        lines.append(f"{words['env']}{words['colon']}{export_line(env)}  # {env.why.get(lang).strip()}")
    return lines


def evidence_line(evidence: Evidence) -> str:
    """`path:line  text` as the text report prints it."""
    return f"{evidence.path}:{evidence.line}  {evidence.text}"


def finding_fingerprint(finding: Finding) -> str:
    """Stable across runs and line shifts: rule id plus the first evidence with numbers folded."""
    text = _NUMBERS.sub("0", finding.evidence[0].text)
    return hashlib.sha256(f"{finding.rule.id}\n{text}".encode()).hexdigest()[:16]


def location_fingerprint(rule_id: str, evidence: Evidence) -> str:
    """Stable across runs and line shifts: rule id, path and the log text with numbers folded."""
    text = _SPACE.sub(" ", _NUMBERS.sub("0", _HEX.sub("0x0", evidence.text))).strip()
    return hashlib.sha256(f"{rule_id}\n{evidence.path}\n{text}".encode()).hexdigest()[:32]
