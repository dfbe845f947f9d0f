"""Markdown: log text only inside fences that cannot be closed from inside, the rest escaped, size limit."""

from __future__ import annotations

import re

from ascend_doctor.model import Evidence, InputRecord, Report
from ascend_doctor.render.markdown import fenced, inline, prose
from tests.render.sample import OOM, finding, make_rule, render, sample_report

MIB = 1024 * 1024


def outside_code(markdown: str) -> str:
    """The document with fenced code blocks and code spans removed: what Markdown would interpret."""
    without_blocks = re.sub(r"^(`{3,})[^\n]*\n.*?^\1$", "", markdown, flags=re.S | re.M)
    return re.sub(r"(`+)[^`]+?\1", "", without_blocks)


def test_evidence_sits_in_a_fence_longer_than_any_backtick_run() -> None:
    output = render("markdown", sample_report())
    assert "\n`````text\nlogs/rank0.log:41" in output
    assert "````" not in outside_code(output).replace("`````", "")
    assert fenced("a ``````` b").startswith("````````text\n")
    assert fenced("plain").startswith("```text\n")


def test_log_text_cannot_inject_markdown_or_html() -> None:
    hostile = "<script>alert(1)</script> [x](javascript:1) **b** | $x$"
    rule = make_rule("sample.hostile")
    report = sample_report()._replace(
        findings=(finding(rule, (Evidence("<b>|x.log", 1, hostile),)),),
        inputs=(InputRecord("<b>|x.log", "read", lines=1), InputRecord("y|<i>.log", "skipped", "<u>why</u>")),
    )
    interpreted = outside_code(render("markdown", report))
    for raw in ("<script>", "<b>", "<i>", "<u>", "](javascript", "**b**", "$x$"):
        assert raw not in interpreted, raw
    assert not re.search(r"(?<!\\)\|(x\.log|<)", interpreted)
    assert "&lt;b&gt;\\|x.log" in interpreted


def test_inline_and_prose_escaping() -> None:
    assert inline("a\n# b <c> *d* `e` $f$") == "a # b &lt;c&gt; \\*d\\* \\`e\\` \\$f\\$"
    assert prose("run `npu-smi info` *now*") == "run `npu-smi info` \\*now\\*"


def test_env_remedies_are_a_sh_block_of_exports() -> None:
    output = render("markdown", sample_report())
    assert (
        "```sh\nexport PYTORCH_NPU_ALLOC_CONF=expandable_segments:True  # less fragmentation\n```" in output
    )


def test_inputs_table_lists_read_and_skipped() -> None:
    output = render("markdown", sample_report())
    assert "| logs/rank1.log | read | 80 | gzip-compressed |" in output
    assert "| logs/core.bin | skipped |  | binary file |" in output


def huge_report() -> Report:
    rules = [make_rule(f"sample.huge-{i:03d}")._replace(env=OOM.env) for i in range(300)]
    line = "EL0004 " + "x" * 1000
    findings = tuple(
        finding(rule, tuple(Evidence(f"logs/rank{r}.log", r + 1, line, rank=r) for r in range(10)), 500)
        for rule in rules
    )
    inputs = tuple(InputRecord(f"logs/plog/plog-{i}.log", "read", lines=10) for i in range(20000))
    return sample_report()._replace(findings=findings, inputs=inputs)


def test_a_huge_report_is_cut_to_the_limit_evidence_first() -> None:
    report = huge_report()
    assert len(render("markdown", report).encode()) > MIB
    output = render("markdown", report, max_bytes=MIB)
    assert len(output.encode()) <= MIB
    assert "Evidence was shortened" in output
    assert output.count("\n### ") >= 300


def test_a_tiny_limit_keeps_whole_sections_and_says_so() -> None:
    output = render("markdown", sample_report(), max_bytes=600)
    assert len(output.encode()) <= 600
    assert output.startswith("## ascend-doctor: ")
    assert re.search(r"\d+ more section\(s\) left out", output)
    assert output.count("```") % 2 == 0


def test_a_report_under_the_limit_is_unchanged() -> None:
    assert render("markdown", sample_report(), max_bytes=MIB) == render("markdown", sample_report())


def test_zero_findings_still_has_verdict_and_inputs() -> None:
    output = render("markdown", sample_report()._replace(findings=()))
    assert output.startswith("## ascend-doctor: No known Ascend failure cause found.")
    assert "### Inputs" in output and "### 1." not in output


def test_run_warnings_are_quoted_under_the_verdict_escaped() -> None:
    warning = "the inputs span more than one run: <b>old</b>.log holds only errors from over 24 hours before"
    text = render("markdown", sample_report()._replace(warnings=(warning,)))
    line = next(line for line in text.splitlines() if line.startswith("> Warning: "))
    assert "&lt;b&gt;old&lt;/b&gt;" in line and "<b>" not in text
    assert text.index(line) < text.index("\n### ")
