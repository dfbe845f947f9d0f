"""Which accelerator a log shows: an Ascend NPU, an NVIDIA GPU or a Windows host, both or neither.

Some failures happen to a job on any accelerator (a port already in use, host memory exhausted, a
vLLM KV cache that does not fit), and the rules for them fire on a GPU job's log as well. There the
honest answer is "not an Ascend failure". The signs are read in the first and last bytes of each
input (the scanner keeps them) and in the lines rules matched. Only strong GPU signs count: a CUDA
device in use (`cuda:0`, `CUDA_VISIBLE_DEVICES`, an NVIDIA GPU's name, a CUDA OOM, NCCL's own log
lines), not code that merely asks for CUDA on an NPU machine ("Found no NVIDIA driver", "Torch not
compiled with CUDA enabled"). Ascend's software does not run on Windows: a Python package path of a
Windows drive (`H:\\conda\\...\\site-packages`) is such a sign too.
"""

from __future__ import annotations

import re

ASCEND_SIGN = re.compile(
    rb"(?i:(?<![a-z])npu|npu(?![a-z])|ascend|(?<![a-z])cann(?![a-z])|hccl|aclnn|aclrt|davinci|mindie)"
    rb"|\bE(?:[A-Z]\d{4}|\d{5})\b"  # a CANN error code: EL0004, EZ9999, E40021
    rb"|\[(?:ERROR|WARNING|INFO|EVENT|DEBUG)\] [A-Z_]+\(\d+,"  # a plog line: [ERROR] RUNTIME(1234,python)
    rb"|\b(?:910[ABC]\d?|310P\d?)\b"
)
GPU_SIGN = re.compile(
    rb"CUDA_VISIBLE_DEVICES|\bcuda:\d|device=['\"]cuda|CUDA out of memory|(?i:nvidia-smi)"
    rb"|NVIDIA (?:GeForce|Tesla|RTX|Quadro|TITAN|[AHLV]\d{2,3}\b)"
    rb"|\b(?:A100|H100|H200|V100|A800|H800|L40S?|RTX ?\d{4})\b"
    rb"|cudaError\w+|CUDA error: |libcudart\.so|CUBLAS_STATUS_\w+|CUDNN_STATUS_\w+"
    rb"|NCCL (?:WARN|INFO) |nccl(?:InternalError|UnhandledCudaError|SystemError)"
)
WINDOWS_SIGN = re.compile(rb"\b[A-Z]:\\(?:[^\\\s\"']+\\)+(?:site|dist)-packages\\")
SIGN_LIMIT = 60  # characters of a sign kept to quote it
GPU, WINDOWS = "gpu", "windows"  # what a foreign sign is of: "gpu:A100", "windows:H:\\conda\\..."


def ascend_sign(data: bytes) -> bool:
    return ASCEND_SIGN.search(data) is not None


def foreign_sign(data: bytes) -> str:
    """The first strong sign in `data` of a job that is not on an Ascend NPU, as `kind:text`
    (an NVIDIA GPU, or a Windows host), "" when none."""
    for kind, pattern in ((GPU, GPU_SIGN), (WINDOWS, WINDOWS_SIGN)):
        found = pattern.search(data)
        if found:
            return f"{kind}:{found.group(0).decode('utf-8', 'replace')[:SIGN_LIMIT]}"
    return ""


def signs(head: bytes, tail: bytes, plog: bool) -> tuple[bool, str]:
    """(an Ascend sign, the first foreign sign) of one input's first and last bytes. A CANN plog
    is an Ascend log whatever it holds."""
    if plog:
        return True, ""
    return ascend_sign(head) or ascend_sign(tail), foreign_sign(head) or foreign_sign(tail)
