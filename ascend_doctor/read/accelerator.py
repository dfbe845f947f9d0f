"""Which accelerator a log shows: an Ascend NPU, an NVIDIA GPU or a Windows host, both or neither.

Some failures happen to a job on any accelerator (a port already in use, host memory exhausted, a
vLLM KV cache that does not fit), and the rules for them fire on a GPU job's log as well. There the
honest answer is "not an Ascend failure". The signs are read in the first and last bytes of each
input (the scanner keeps them) and in the lines rules matched. Only strong GPU signs count: a CUDA
device in use (`cuda:0`, `CUDA_VISIBLE_DEVICES`, an NVIDIA GPU's name, a CUDA OOM, NCCL's own log
lines, a CUDA toolkit that `nvcc -V` or a build's version check reports), not code that merely
asks for CUDA on an NPU machine ("Found no NVIDIA driver", "Torch not compiled with CUDA
enabled"). Ascend's software does not run on Windows: a Python package path of a Windows drive
(`H:\\conda\\...\\site-packages`) is such a sign too.
"""

from __future__ import annotations

import re

from ascend_doctor.regexes import regex

ASCEND_SIGN = regex(
    rb"(?i:(?<![a-z])npu|npu(?![a-z])|ascend|(?<![a-z])cann(?![a-z])|hccl|aclnn|aclrt|davinci|mindie|mindspeed)"
    rb"|\bE(?:[A-Z]\d{4}|\d{5})\b"  # a CANN error code: EL0004, EZ9999, E40021
    rb"|\[(?:ERROR|WARNING|INFO|EVENT|DEBUG)\] [A-Z_]+\(\d+,"  # a plog line: [ERROR] RUNTIME(1234,python)
    rb"|\b(?:910[ABC]\d?|310P\d?)\b"
)
GPU_SIGN = regex(
    rb"CUDA_VISIBLE_DEVICES|\bcuda:\d|device=['\"]cuda|CUDA out of memory|(?i:nvidia-smi)"
    rb"|NVIDIA (?:GeForce|Tesla|RTX|Quadro|TITAN|[AHLV]\d{2,3}\b)"
    rb"|\b(?:A100|H100|H200|V100|A800|H800|L40S?|RTX ?\d{4})\b"
    rb"|cudaError\w+|CUDA error: |libcudart\.so|CUBLAS_STATUS_\w+|CUDNN_STATUS_\w+"
    rb"|The detected CUDA version \(\d|Cuda compilation tools, release \d"
    rb"|NCCL (?:WARN|INFO) |nccl(?:InternalError|UnhandledCudaError|SystemError)"
)
WINDOWS_SIGN = regex(rb"\b[A-Z]:\\(?:[^\\\s\"']+\\)+(?:site|dist)-packages\\")
# The signs' case-insensitive pattern pieces with their lookarounds make `re` try every position:
# ~20 ms for an input's 80 KB. Each sign is looked for only around the places an alternation of
# its literals finds in the lower-cased bytes (1.5-5.5 ms); CONTEXT bytes either side hold any match.
# The plog hint is the plog line's whole head: with `[INFO] ` alone, an application log printing it
# on every line cost a search per line (3.4 ms for a 2 KB file, 34 s for a folder of 10,000).
ASCEND_HINTS = regex(
    rb"(?<![a-z])npu|npu(?![a-z])|ascend|cann|hccl|aclnn|aclrt|davinci|mindie|mindspeed|910|310p|e(?:[a-z]\d{4}|\d{5})\b"
    rb"|\[(?:error|warning|info|event|debug)\] [a-z_]+\(\d+,"
)
GPU_HINTS = regex(rb"cuda|nvidia|a100|h100|h200|v100|a800|h800|l40|rtx|cublas|cudnn|nccl")
WINDOWS_HINT = b"-packages\\"
# A line in which the writer names Ascend as where the job will run, or says there is none yet.
_NAMES = "(?:ascend|npu|昇腾)"
_AFTER = r"(?:\blater\b|\byet\b|\bplan|\bwill port|\bbefore (?:moving|porting)|之后|打算)"
_BEFORE = r"(?:\bplan\w*|\bwill port|\bdon'?t have|\bbefore (?:moving|porting)|打算|准备)"
PLANNED = rf"(?im)^[^\n]*(?:{_NAMES}[^\n]*{_AFTER}|{_BEFORE}[^\n]*{_NAMES})[^\n]*$".encode()
CONTEXT = 64
SIGN_LIMIT = 60  # characters of a sign kept to quote it
GPU, WINDOWS = "gpu", "windows"  # what a foreign sign is of: "gpu:A100", "windows:H:\\conda\\..."
NONE = "none"  # logs that show no accelerator at all


def _first(sign: re.Pattern[bytes], data: bytes, hints: re.Pattern[bytes]) -> re.Match[bytes] | None:
    """`sign`'s first match in `data`, looked for only around what `hints` finds in its lower case.
    A match is confirmed in the whole of `data`: at a window's end `npu(?![a-z])` would take the
    `npu` of `npuabc` for a word."""
    for hint in hints.finditer(data.lower()):
        start, end = max(0, hint.start() - CONTEXT), hint.end() + CONTEXT
        found = sign.search(data, start, end)
        while found:
            confirmed = sign.match(data, found.start())
            if confirmed:
                return confirmed
            found = sign.search(data, found.start() + 1, end)
    return None


def ascend_sign(data: bytes) -> bool:
    return _first(ASCEND_SIGN, data, ASCEND_HINTS) is not None


def foreign_sign(data: bytes) -> str:
    """The first strong sign in `data` of a job that is not on an Ascend NPU, as `kind:text`
    (an NVIDIA GPU, or a Windows host), "" when none."""
    found = _first(GPU_SIGN, data, GPU_HINTS)
    kind = GPU
    if found is None and WINDOWS_HINT in data:
        found, kind = WINDOWS_SIGN.search(data), WINDOWS
    return f"{kind}:{found.group(0).decode('utf-8', 'replace')[:SIGN_LIMIT]}" if found else ""


def signs(head: bytes, tail: bytes, plog: bool) -> tuple[bool, str]:
    """(an Ascend sign, the first foreign sign) of one input's first and last bytes. A CANN plog
    is an Ascend log whatever it holds. The writer's sentences that name Ascend as a plan or as
    missing ("we will port to Ascend later", "I don't have an Ascend card yet") show no NPU."""
    if plog:
        return True, ""
    ascend = any(ascend_sign(_without_plans(data)) for data in (head, tail) if ascend_sign(data))
    return ascend, foreign_sign(head) or foreign_sign(tail)


def _without_plans(data: bytes) -> bytes:
    return regex(PLANNED).sub(b"", data)  # compiled on first use: only logs that name Ascend need it
