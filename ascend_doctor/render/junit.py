"""JUnit XML (`--format junit`): a test case per input, a failure per finding seen in it that is
at least as severe as `--fail-on`; the findings below it are in the case's `system-out`.

Unlike the other renderers this one weighs `--fail-on`: in JUnit a failure is the verdict itself
(Jenkins and GitLab mark the test red), so a harmless note must not be one when the run passes."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import TextIO

from ascend_doctor.model import Finding, InputRecord, Report
from ascend_doctor.render.advice import advice_lines, evidence_line, labels
from ascend_doctor.render.base import headline

# Characters XML 1.0 cannot carry at all, escaped or not (control codes, lone surrogates, U+FFFE/F).
_ILLEGAL = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
COUNTS = ("tests", "failures", "errors", "skipped")


def xml_text(text: str) -> str:
    """Log text with the characters XML 1.0 forbids removed."""
    return _ILLEGAL.sub("", text)


def failure_body(finding: Finding, path: str, lang: str) -> str:
    """Cause, fix, env remedies and the evidence lines from this input."""
    lines = advice_lines(finding, lang)[1:]
    evidence = [evidence_line(e) for e in finding.evidence if e.path == path]
    if evidence:
        lines += [f"{labels(lang)['evidence']}:", *evidence]
    return "\n".join(lines)


def testcase(record: InputRecord, findings: list[Finding], lang: str, fail_on: str) -> ET.Element:
    case = ET.Element("testcase", classname="ascend-doctor", name=xml_text(record.path))
    if record.skipped:
        ET.SubElement(case, "skipped", message=xml_text(record.reason))
    below = []
    for finding in findings:
        rule = finding.rule
        title = headline(finding, lang)
        if not rule.severity.fails(fail_on):
            severity = labels(lang)[rule.severity.value]
            below.append(f"{severity}: {title} ({rule.id})\n{failure_body(finding, record.path, lang)}")
            continue
        failure = ET.SubElement(case, "failure", message=xml_text(title), type=rule.id)
        failure.text = xml_text(failure_body(finding, record.path, lang))
    if below:
        ET.SubElement(case, "system-out").text = xml_text("\n\n".join(below))
    return case


def testsuite(report: Report, fail_on: str = "error") -> ET.Element:
    """All inputs, in input order, with the counts of failed and skipped ones."""
    cases = [
        testcase(record, [f for f in report.findings if record.path in f.paths], report.lang, fail_on)
        for record in report.inputs
    ]
    counts = (
        len(cases),
        sum(1 for case in cases if case.find("failure") is not None),
        0,
        sum(1 for record in report.inputs if record.skipped),
    )
    suite = ET.Element("testsuite", name="ascend-doctor", **dict(zip(COUNTS, map(str, counts))))
    suite.extend(cases)
    return suite


class JunitRenderer:
    name = "junit"

    def __init__(self, fail_on: str = "error") -> None:
        self.fail_on = fail_on

    def render(self, report: Report, stream: TextIO) -> None:
        suite = testsuite(report, self.fail_on)
        root = ET.Element("testsuites", name="ascend-doctor", **{key: suite.get(key, "") for key in COUNTS})
        root.append(suite)
        ET.indent(root)
        stream.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        stream.write(ET.tostring(root, encoding="unicode"))
        stream.write("\n")
