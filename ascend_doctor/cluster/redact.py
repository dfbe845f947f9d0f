"""Secrets out of everything `collect` writes: tokens, keys and passwords in variables, command
lines and JSON, `Authorization:` headers, credentials in URLs, well-known token shapes; IP
addresses and host names too when asked (each replaced by a stable stand-in, `host-1`, `ip-2`, so
that lines about one machine still read as one machine)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from ascend_doctor.model import Evidence, Finding, InputRecord, Match, Report

MASK = "[REDACTED]"
_SECRET_NAME = (
    r"[\w.-]*?(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|access[_-]?key(?:[_-]?id)?"
    r"|private[_-]?key|secret[_-]?key|credentials?|auth[_-]?key|session[_-]?key|cookie)"
)
_VALUE = r"""("[^"]*"|'[^']*'|[^\s"',;&]+)"""
# (pattern, replacement): order matters, the most specific first.
_SECRETS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)", re.S), MASK),
    (re.compile(r"(?i)\b((?:proxy-)?authorization\s*[:=]\s*)[^\r\n\"',]+"), rf"\1{MASK}"),
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}"), rf"\1 {MASK}"),
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s:@\"']+(?::[^/\s@\"']*)?@"), rf"\1{MASK}@"),
    (re.compile(rf"(?i)(--?{_SECRET_NAME})(=|\s+){_VALUE}"), rf"\1\2{MASK}"),
    (re.compile(rf"(?i)(?<![\w-])([\"']?{_SECRET_NAME}[\"']?\s*[:=]\s*){_VALUE}"), rf"\1{MASK}"),
    (
        re.compile(
            r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|hf_[A-Za-z0-9]{20,}|glpat-[\w-]{20,})"
        ),
        MASK,
    ),
    (re.compile(r"\b(?:sk-[A-Za-z0-9_-]{20,}|xox[abpr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16})\b"), MASK),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), MASK),
)
_SECRET_KEY = re.compile(rf"(?i){_SECRET_NAME}")
_IPV4 = re.compile(r"(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?![\d.])")
_IPV6 = re.compile(r"(?i)(?<![\w:])(?:[0-9a-f]{1,4}:){5,7}[0-9a-f]{1,4}(?![\w:])")


class Redactor:
    """Redacts text; counts what it replaced. With `hosts`, also IP addresses and the host names given
    (and any met later through `add_hosts`)."""

    def __init__(self, hosts: bool = False, names: Iterable[str] = ()) -> None:
        self.hosts = hosts
        self.replaced: Counter[str] = Counter()
        self._stand_ins: dict[str, str] = {}
        self._host_names: set[str] = set()
        self._names: re.Pattern[str] | None = None
        self.add_hosts(names)

    def add_hosts(self, names: Iterable[str]) -> None:
        """Host names to replace (when `hosts` is on), longest first so an FQDN goes whole."""
        if not self.hosts:
            return
        self._host_names.update(name for name in names if name and name not in ("localhost", "-"))
        if self._host_names:
            choices = "|".join(re.escape(name) for name in sorted(self._host_names, key=len, reverse=True))
            self._names = re.compile(rf"(?<![\w.-])(?:{choices})(?![\w-])", re.IGNORECASE)

    def __call__(self, text: str) -> str:
        for pattern, replacement in _SECRETS:
            text, count = pattern.subn(replacement, text)
            if count:
                self.replaced["secret"] += count
        if self.hosts:
            text = _IPV6.sub(lambda found: self._stand_in(found.group(), "ip"), text)
            text = _IPV4.sub(lambda found: self._stand_in(found.group(), "ip"), text)
            if self._names is not None:
                text = self._names.sub(lambda found: self._stand_in(found.group().lower(), "host"), text)
        return text

    def value(self, name: str, value: str) -> str:
        """A named value (an environment variable, a JSON key): gone whole when the name is a
        secret's, else redacted like any text."""
        if _SECRET_KEY.fullmatch(name):
            self.replaced["secret"] += 1
            return MASK
        return self(value)

    def _stand_in(self, value: str, kind: str) -> str:
        if value not in self._stand_ins:
            self._stand_ins[value] = (
                f"{kind}-{sum(1 for v in self._stand_ins.values() if v.startswith(kind)) + 1}"
            )
        self.replaced[kind] += 1
        return self._stand_ins[value]


def _evidence(evidence: Evidence, redact: Redactor) -> Evidence:
    return evidence._replace(
        path=redact(evidence.path),
        text=redact(evidence.text),
        captures=tuple((name, redact(value)) for name, value in evidence.captures),
    )


def _finding(finding: Finding, redact: Redactor) -> Finding:
    return finding._replace(
        evidence=tuple(_evidence(evidence, redact) for evidence in finding.evidence),
        paths=tuple(redact(path) for path in finding.paths),
        env=tuple(remedy._replace(value=redact(remedy.value)) for remedy in finding.env),
    )


def _record(record: InputRecord, redact: Redactor) -> InputRecord:
    return record._replace(
        path=redact(record.path),
        reason=redact(record.reason),
        notes=tuple(redact(note) for note in record.notes),
        node=redact(record.node),
    )


def redact_report(report: Report, redact: Redactor) -> Report:
    """The report with every piece of log text, path and name redacted; the rules' prose is ours."""
    return report._replace(
        findings=tuple(_finding(finding, redact) for finding in report.findings),
        inputs=tuple(_record(record, redact) for record in report.inputs),
        warnings=tuple(redact(warning) for warning in report.warnings),
        matches=tuple(
            Match(m.rule_id, m.pattern_index, _evidence(m.evidence, redact), m.input_index)
            for m in report.matches
        ),
        node=redact(report.node),
    )
