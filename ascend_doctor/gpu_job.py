"""A GPU job's findings are not Ascend failures, nor are a Windows job's.

A rule for a failure that jobs on any accelerator share (a port already in use, host memory
exhausted, a vLLM KV cache that does not fit) fires on a CUDA job's log too. When an input shows an
NVIDIA GPU or a Windows host (where Ascend's software does not run) and nothing in the logs shows an
Ascend NPU, each such finding keeps its title and fix but is reported as `not_ascend`, without the
Ascend environment remedies, and its cause says why.
"""

from __future__ import annotations

from collections.abc import Sequence

from ascend_doctor.model import NOT_A_FAILURE, Finding, InputRecord, Match, Text
from ascend_doctor.read.accelerator import GPU, ascend_sign

# Findings that say CUDA is asked for where there is none: whatever the log quotes (`cuda:0` in
# the user's code), such a job does not run on a GPU.
NO_GPU_HERE = ("cuda_api_on_npu", "torch_npu_not_loaded")


def gpu_only(records: Sequence[InputRecord], matches: Sequence[Match]) -> str:
    """The sign (`kind:text`) that makes these logs a GPU or Windows job's ("" when they are not,
    or show an NPU too)."""
    if any(record.ascend_seen for record in records):
        return ""
    sign = next((record.foreign_seen for record in records if record.foreign_seen), "")
    if not sign or any(ascend_sign(match.evidence.text.encode("utf-8", "replace")) for match in matches):
        return ""
    return sign


def _on_gpu(finding: Finding, sign: str) -> Finding:
    kind, _, text = sign.partition(":")
    where_en, where_zh = (
        (f"an NVIDIA GPU ({text})", f"NVIDIA GPU（{text}）")
        if kind == GPU
        else (f"Windows ({text})", f"Windows（{text}）")
    )
    cause = finding.rule.cause
    rule = finding.rule._replace(
        category="not_ascend",
        env=(),
        cause=Text(
            f"These logs are of a job on {where_en} and show no Ascend NPU, so this is not an Ascend "
            f"failure. {cause.en}",
            f"这些日志来自运行在{where_zh}上的任务，看不到昇腾 NPU，因此这不是昇腾故障。{cause.zh}",
        ),
    )
    return finding._replace(rule=rule, env=())


def as_gpu_job(findings: Sequence[Finding], sign: str) -> tuple[Finding, ...]:
    """`findings` of a GPU job's logs (`sign`: what shows the GPU): every Ascend claim becomes
    not_ascend; findings already not_ascend or no_failure are left as they are."""
    if not sign or any(finding.rule.category in NO_GPU_HERE for finding in findings):
        return tuple(findings)
    return tuple(f if f.rule.category in NOT_A_FAILURE else _on_gpu(f, sign) for f in findings)
