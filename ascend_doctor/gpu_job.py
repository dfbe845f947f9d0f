"""A GPU job's findings are not Ascend failures, nor are a Windows job's.

A rule for a failure that jobs on any accelerator share (a port already in use, host memory
exhausted, a vLLM KV cache that does not fit) fires on a CUDA job's log too. When an input shows an
NVIDIA GPU or a Windows host (where Ascend's software does not run) and nothing in the logs shows an
Ascend NPU, each such finding keeps its title and fix but is reported as `not_ascend`, without the
Ascend environment remedies, and its cause says why. Code that asks for CUDA in logs that show no
accelerator at all is no CUDA call on an NPU either: it is a script run where there is no GPU;
nor is host RAM exhausted there an Ascend failure.
"""

from __future__ import annotations

from collections.abc import Sequence

from ascend_doctor.model import NOT_A_FAILURE, Finding, InputRecord, Match, Text
from ascend_doctor.read.accelerator import GPU, NONE, WINDOWS, ascend_sign
from ascend_doctor.regexes import regex

# Findings that say CUDA is asked for where there is none: whatever the log quotes (`cuda:0` in
# the user's code), such a job does not run on a GPU. On Windows it runs on no NPU either.
NO_GPU_HERE = ("cuda_api_on_npu", "torch_npu_not_loaded")
# In logs that show no accelerator at all: CUDA asked for where there is none, and what any
# machine can run out of (host RAM), are no Ascend failure.
NOT_HERE_EITHER = ("cuda_api_on_npu", "host_out_of_memory")
# GPU signs that are only code asking for CUDA, not a machine that has it (nvidia-smi, a CUDA OOM):
# beside such a finding they show no GPU.
ASKED_FOR_CUDA = regex(r"CUDA_VISIBLE_DEVICES|cuda:\d|device=['\"]cuda")


def gpu_only(records: Sequence[InputRecord], matches: Sequence[Match]) -> str:
    """The sign (`kind:text`) that makes these logs a GPU or Windows job's, `none:` when they show
    no accelerator at all, "" when they show an NPU. A Windows job's logs may name Ascend where no
    rule matched (the user's plan to move the code to an Ascend server): its software does not run
    on Windows, so only an Ascend sign on a matched line outweighs a Windows one."""
    if any(ascend_sign(match.evidence.text.encode("utf-8", "replace")) for match in matches):
        return ""
    foreign = next((record.foreign_seen for record in records if record.foreign_seen), "")
    if foreign.startswith(f"{WINDOWS}:"):
        return foreign
    if any(record.ascend_seen for record in records):
        return ""
    return foreign or f"{NONE}:"


def _not_ascend(finding: Finding, sign: str) -> Finding:
    kind, _, text = sign.partition(":")
    cause = finding.rule.cause
    if kind == NONE and finding.rule.category == "cuda_api_on_npu":
        why = Text(
            "These logs show no Ascend NPU and no NVIDIA GPU: the code asks for CUDA on a machine that has "
            "neither, so this is not an Ascend failure.",
            "这些日志中既看不到昇腾 NPU，也看不到 NVIDIA GPU：代码在一台两者都没有的机器上请求 CUDA，"
            "因此这不是昇腾故障。",
        )
    elif kind == NONE:
        why = Text(
            "These logs show no Ascend NPU (nor any other accelerator): the host itself failed, as it would "
            "without one, so this is not an Ascend failure.",
            "这些日志中看不到昇腾 NPU（也看不到其他加速卡）：出问题的是主机本身，没有加速卡时同样会发生，"
            "因此这不是昇腾故障。",
        )
    else:
        where_en, where_zh = (
            (f"an NVIDIA GPU ({text})", f"NVIDIA GPU（{text}）")
            if kind == GPU
            else (f"Windows ({text})", f"Windows（{text}）")
        )
        why = Text(
            f"These logs are of a job on {where_en} and show no Ascend NPU, so this is not an Ascend "
            "failure.",
            f"这些日志来自运行在{where_zh}上的任务，看不到昇腾 NPU，因此这不是昇腾故障。",
        )
    rule = finding.rule._replace(
        category="not_ascend", env=(), cause=Text(f"{why.en} {cause.en}", f"{why.zh}{cause.zh}")
    )
    return finding._replace(rule=rule, env=())


def as_gpu_job(findings: Sequence[Finding], sign: str) -> tuple[Finding, ...]:
    """`findings` of a GPU job's logs (`sign`: what shows the GPU): every Ascend claim becomes
    not_ascend; findings already not_ascend or no_failure are left as they are."""
    if sign.startswith(NONE):
        return tuple(_not_ascend(f, sign) if f.rule.category in NOT_HERE_EITHER else f for f in findings)
    kind, _, text = sign.partition(":")
    asked_for = kind == GPU and ASKED_FOR_CUDA.match(text) is not None
    if not sign or (asked_for and any(finding.rule.category in NO_GPU_HERE for finding in findings)):
        return tuple(findings)
    return tuple(f if f.rule.category in NOT_A_FAILURE else _not_ascend(f, sign) for f in findings)
