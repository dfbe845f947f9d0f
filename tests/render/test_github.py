"""GitHub workflow commands: escaping, the annotation cap, and log text that must stay inert."""

from __future__ import annotations

import re

from ascend_doctor.model import Evidence, Report, Severity
from ascend_doctor.render.github import MAX_ANNOTATIONS, escape_data, escape_property
from tests.render.sample import OOM, finding, make_rule, render, sample_report

ANNOTATIONS = ("error", "warning", "notice")


def run_like_the_runner(output: str) -> list[tuple[str, str]]:
    """The commands an Actions runner would execute: (name, data), honouring stop-commands."""
    executed: list[tuple[str, str]] = []
    stop_token = None
    for line in map(str.lstrip, output.splitlines()):
        end = line.find("::", 2)
        if not line.startswith("::") or end < 0:
            continue
        name, data = line[2:end].split(" ")[0], line[end + 2 :]
        if stop_token is not None:
            if name == stop_token:
                stop_token = None
            continue
        if name == "stop-commands":
            stop_token = data
        executed.append((name, data))
    assert stop_token is None, "a stop-commands fence was left open"
    return executed


def hostile_report() -> Report:
    evidence = (
        Evidence("train.log", 1, "::add-mask::secret"),
        Evidence("train.log", 2, "::set-env name=X::1"),
        Evidence("train.log", 3, "ok\n::add-mask::hidden\n::endgroup::\n##[set-env name=Y;]2"),
        Evidence("train.log", 4, "::0123456789abcdef0123456789abcdef:: guessed resume"),
        Evidence("x\n::set-env name=Z::3.log", 5, "EL0004"),
    )
    return sample_report()._replace(findings=(finding(OOM, evidence),))


def test_log_commands_are_never_executed() -> None:
    for report in (sample_report(), hostile_report()):
        names = {name for name, _ in run_like_the_runner(render("github", report))}
        assert names <= {*ANNOTATIONS, "group", "endgroup", "stop-commands"}


def test_log_lines_appear_only_inside_the_fence() -> None:
    output = render("github", sample_report())
    inside = False
    for line in output.splitlines():
        if line.startswith("::stop-commands::"):
            token, inside = line.split("::")[2], True
        elif inside and line == f"::{token}::":
            inside = False
        elif "::add-mask::" in line or "::set-env" in line:
            assert inside, line
    assert "::add-mask::secret" in output and "::set-env name=X::1" in output


def test_the_fence_token_is_fresh_and_unguessable() -> None:
    tokens = {re.search(r"::stop-commands::(\w+)", render("github", sample_report()))[1] for _ in range(3)}
    assert len(tokens) == 3
    assert all(re.fullmatch(r"[0-9a-f]{32}", token) for token in tokens)


def test_escaping() -> None:
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a:b,c%d\ne\r") == "a%3Ab%2Cc%25d%0Ae%0D"


def test_annotation_properties_and_message_are_escaped() -> None:
    rule = make_rule("sample.odd-path")
    report = sample_report()._replace(findings=(finding(rule, (Evidence("a,b:c.log", 9, "x"),)),))
    line = render("github", report).splitlines()[0]
    assert line.startswith("::error file=a%2Cb%3Ac.log,line=9,title=Sample odd path::Sample odd path%0A")
    assert "100%25 load" in line and "\n" not in line


def test_severity_maps_to_the_command() -> None:
    lines = render("github", sample_report()).splitlines()
    assert [line.split(" ")[0] for line in lines[:3]] == ["::error", "::warning", "::notice"]


def test_message_has_cause_fix_and_exports_in_the_report_language() -> None:
    english = render("github", sample_report()).splitlines()[0]
    assert "Cause: " in english and "Fix: " in english
    assert "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True" in english
    chinese = render("github", sample_report("zh")).splitlines()[0]
    assert "原因：device oom 在 100%25 负载时发生。" in chinese


def test_at_most_ten_annotations_and_one_line_for_the_rest() -> None:
    rules = [make_rule(f"sample.cause-{i:02d}", Severity.WARNING) for i in range(13)]
    findings = tuple(finding(rule, (Evidence("a.log", i + 1, "x"),)) for i, rule in enumerate(rules))
    output = render("github", sample_report()._replace(findings=findings))
    executed = [name for name, _ in run_like_the_runner(output)]
    assert sum(name in ANNOTATIONS for name in executed) == MAX_ANNOTATIONS
    rest = [line for line in output.splitlines() if "more finding(s) not annotated" in line]
    assert len(rest) == 1 and rest[0].startswith("ascend-doctor: 3 more")
    assert "sample.cause-10, sample.cause-11, sample.cause-12" in rest[0]


def test_no_findings_is_one_notice() -> None:
    output = render("github", sample_report()._replace(findings=()))
    assert run_like_the_runner(output) == [("notice", "No known Ascend failure cause found.")]


def test_long_evidence_is_grouped() -> None:
    executed = [name for name, _ in run_like_the_runner(render("github", sample_report()))]
    assert executed.count("group") == executed.count("endgroup") == 1


def test_a_run_warning_is_one_escaped_warning_command() -> None:
    warning = "the inputs span more than one run: old\n::error::x.log holds only errors from 100% earlier"
    text = render("github", sample_report()._replace(warnings=(warning,)))
    lines = [line for line in text.splitlines() if line.startswith("::warning title=ascend-doctor::")]
    assert lines == ["::warning title=ascend-doctor::" + escape_data(warning)]
    assert "\n::error::x.log" not in text
