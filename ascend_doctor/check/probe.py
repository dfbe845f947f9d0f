"""`--deep`: a tiny job in the target interpreter (import torch and torch_npu, a tensor on the NPU,
one op, one sync), under a time limit. What it prints goes through the diagnose engine, so an
`undefined symbol`, a missing `libascendcl.so` or a 507033 comes back as the finding a log would give."""

from __future__ import annotations

import io
import subprocess
from typing import NamedTuple

from ascend_doctor.check.machine import Machine
from ascend_doctor.engine import ScanOptions, diagnose
from ascend_doctor.model import Report
from ascend_doctor.rulebase.load import load_rulebase

DONE = "ascend-doctor probe: ok"
PROBE_SCRIPT = f"""\
import torch
import torch_npu
x = torch.ones(2, 2).npu()
y = (x + x).sum()
torch.npu.synchronize()
assert float(y.cpu()) == 8.0, float(y.cpu())
print({DONE!r}, flush=True)
"""
PROBE_TIMEOUT = 120.0
PROBE_NAME = "<--deep probe>"


class ProbeRun(NamedTuple):
    """How the probe ended: its output, exit code (None: killed at the time limit), the engine's report."""

    output: str
    returncode: int | None
    report: Report

    @property
    def passed(self) -> bool:
        return self.returncode == 0 and DONE in self.output


def run_probe(machine: Machine, interpreter: str, lang: str, timeout: float = PROBE_TIMEOUT) -> ProbeRun:
    try:
        done = subprocess.run(
            [interpreter, "-c", PROBE_SCRIPT],
            env=dict(machine.environ),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=timeout,
            check=False,
        )
        output, code = done.stdout.decode("utf-8", "replace"), done.returncode
    except subprocess.TimeoutExpired as exc:
        output, code = (exc.output or b"").decode("utf-8", "replace"), None
    except OSError as exc:
        output, code = f"cannot run {interpreter}: {exc.strerror or exc}", 127
    options = ScanOptions(stdin_name=PROBE_NAME, lang=lang)
    report = diagnose(["-"], load_rulebase(()), options, stdin=io.BytesIO(output.encode("utf-8")))
    return ProbeRun(output, code, report)
