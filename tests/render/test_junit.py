"""JUnit XML: parses, one test case per input, a failure per finding, control characters survive."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from ascend_doctor.model import Evidence, InputRecord
from ascend_doctor.render.junit import xml_text
from tests.conftest import run_cli
from tests.render.sample import OOM, finding, render, sample_report


def test_cases_failures_and_counts() -> None:
    root = ET.fromstring(render("junit", sample_report(), fail_on="info"))
    suite = root.find("testsuite")
    assert suite is not None
    assert {key: suite.get(key) for key in ("tests", "failures", "errors", "skipped")} == {
        "tests": "3",
        "failures": "2",
        "errors": "0",
        "skipped": "1",
    }
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert {case.get("classname") for case in cases.values()} == {"ascend-doctor"}
    rank0 = cases["logs/rank0.log"].findall("failure")
    assert [f.get("type") for f in rank0] == ["sample.device-oom", "sample.timeout-setting"]
    assert rank0[0].get("message") == "Sample device oom"
    assert "Fix: " in (rank0[0].text or "") and "logs/rank0.log:41" in (rank0[0].text or "")
    skipped = cases["logs/core.bin"].find("skipped")
    assert skipped is not None and skipped.get("message") == "binary file"


def test_findings_below_fail_on_are_output_not_failures() -> None:
    """A harmless note must not turn a Jenkins or GitLab test report red when the exit code is 0."""
    suite = ET.fromstring(render("junit", sample_report())).find("testsuite")
    assert suite is not None and suite.get("failures") == "1"
    rank0 = next(case for case in suite.iter("testcase") if case.get("name") == "logs/rank0.log")
    assert [f.get("type") for f in rank0.findall("failure")] == ["sample.device-oom"]
    assert (rank0.findtext("system-out") or "").startswith(
        "info: Sample timeout setting (sample.timeout-setting)"
    )
    chinese = ET.fromstring(render("junit", sample_report()._replace(lang="zh"))).find("testsuite/testcase")
    assert chinese is not None and (chinese.findtext("system-out") or "").startswith("提示: ")
    never = ET.fromstring(render("junit", sample_report(), fail_on="never")).find("testsuite")
    assert never is not None and never.get("failures") == "0" and not never.findall("testcase/failure")


def test_cli_junit_follows_fail_on(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("EL0004: Failed to allocate memory.\n")
    failing = ET.fromstring(run_cli("diagnose", "-f", "junit", str(log)).stdout)
    assert failing.get("failures") == "1"
    passing = run_cli("diagnose", "-f", "junit", "--fail-on", "never", str(log))
    assert passing.exit_code == 0 and ET.fromstring(passing.stdout).get("failures") == "0"


def test_control_characters_in_logs_are_dropped() -> None:
    text = "EL0004\x00 \x1b[31mred\x1b[0m \x07bell \x0c tab\tok ü 日本"
    report = sample_report()._replace(
        findings=(finding(OOM, (Evidence("a\x01.log", 1, text),)),),
        inputs=(InputRecord("a\x01.log", "read", lines=1),),
    )
    case = ET.fromstring(render("junit", report)).find("testsuite/testcase")
    assert case is not None and case.get("name") == "a.log"
    assert "a.log:1  EL0004 [31mred[0m bell  tab\tok ü 日本" in (case.find("failure").text or "")
    assert xml_text("a\x0bb\ufffec\ud800") == "abc"


def test_cli_junit_parses_with_binary_garbage_in_the_log(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_bytes(b"EL0004: Failed to allocate memory. \x1b[0m\x08\x0c \xff\xfe\x1f\n")
    result = run_cli("diagnose", "-f", "junit", str(log), str(tmp_path / "missing.log"))
    assert result.exit_code == 2  # a named input is missing
    suite = ET.fromstring(result.stdout).find("testsuite")
    assert suite is not None and suite.get("tests") == "2" and suite.get("skipped") == "1"
    assert suite.get("failures") == "1"
