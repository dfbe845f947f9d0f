"""One fixed, small report built from model objects: the input of the golden files and behaviour tests.

Its log lines carry what a renderer must neutralise: workflow commands, HTML, backtick runs, `%`.
"""

from __future__ import annotations

import io
import re
from typing import Any

from ascend_doctor.model import (
    Confidence,
    EnvRemedy,
    Evidence,
    Examples,
    Finding,
    InputRecord,
    Kind,
    Match,
    Report,
    Rule,
    Severity,
    Text,
)
from ascend_doctor.ranking import resolve_env
from ascend_doctor.render import RENDERERS

TOKEN = re.compile(r"::stop-commands::([0-9a-f]+)")


def make_rule(
    rule_id: str,
    severity: Severity = Severity.ERROR,
    kind: Kind = Kind.CAUSE,
    category: str = "device_out_of_memory",
    env: tuple[EnvRemedy, ...] = (),
) -> Rule:
    """A rule with generated prose in both languages."""
    name = rule_id.split(".")[-1].replace("-", " ")
    return Rule(
        id=rule_id,
        category=category,
        severity=severity,
        confidence=Confidence.HIGH,
        kind=kind,
        title=Text(f"Sample {name}", f"示例 {name}"),
        cause=Text(f"The {name} happened at 100% load.", f"{name} 在 100% 负载时发生。"),
        fix=Text(f"Fix the {name}; run `npu-smi info` first.", f"修复 {name}；先运行 `npu-smi info`。"),
        env=env,
        patterns=(name,),
        examples=Examples((name,), ("nothing",)),
    )


OOM = make_rule(
    "sample.device-oom",
    env=(
        EnvRemedy(
            "PYTORCH_NPU_ALLOC_CONF", "expandable_segments:True", Text("less fragmentation", "减少碎片")
        ),
    ),
)
TIMEOUT = make_rule("sample.notify-timeout", Severity.WARNING, Kind.SYMPTOM, "hccl_timeout")
NOTE = make_rule("sample.timeout-setting", Severity.INFO, category="configuration")
UNUSED = make_rule("sample.never-fires", category="configuration")
RULES = (OOM, TIMEOUT, NOTE, UNUSED)


def finding(rule: Rule, evidence: tuple[Evidence, ...], count: int = 0, **extra: Any) -> Finding:
    return Finding(
        rule=rule,
        evidence=evidence,
        count=count or len(evidence),
        paths=tuple(dict.fromkeys(e.path for e in evidence)),
        ranks=tuple(sorted({e.rank for e in evidence if e.rank is not None})),
        confidence=0.9,
        env=resolve_env(rule, evidence[0]),
        **extra,
    )


def sample_report(lang: str = "en") -> Report:
    rank0, rank1 = "logs/rank0.log", "logs/rank1.log"
    oom = (
        Evidence(rank0, 41, "EL0004: Failed to allocate memory. ::add-mask::secret", rank=0),
        Evidence(rank0, 42, "ERROR <img src=x onerror=alert(1)> ```` | *50%* done", rank=0),
    )
    timeout = tuple(
        Evidence(rank1, 7 + i, f"::set-env name=X::1 EI0002 notify wait timeout, rank:1 try {i}", rank=1)
        for i in range(5)
    )
    note = (Evidence(rank0, 3, "[INFO] HCCL_CONNECT_TIMEOUT is 120"),)
    matches = [Match(OOM.id, 0, e._replace(timestamp=1733306400.0 + e.line), 0) for e in oom]
    matches += [Match(TIMEOUT.id, 0, e, 1) for e in timeout] + [Match(NOTE.id, 0, note[0], 0)]
    return Report(
        findings=(
            finding(OOM, oom, count=3),
            finding(TIMEOUT, timeout, count=7, role="consequence", related_to=OOM.id),
            finding(NOTE, note),
        ),
        inputs=(
            InputRecord(rank0, "read", lines=100, size=4000),
            InputRecord(rank1, "read", lines=80, size=3000, notes=("gzip-compressed",)),
            InputRecord("logs/core.bin", "skipped", "binary file"),
        ),
        tool_version="0.0.0-test",
        rule_count=len(RULES),
        lang=lang,
        matches=tuple(matches),
        rules=(OOM, TIMEOUT, NOTE),
        node="npu-0",
        utc_offset="+0800",
    )


def render(fmt: str, report: Report, **options: Any) -> str:
    """What `--format FMT` writes for `report`."""
    if fmt == "sarif":
        options.setdefault("rules", RULES)
    stream = io.StringIO()
    RENDERERS[fmt](**options).render(report, stream)
    return stream.getvalue()


def normalise_token(output: str) -> str:
    """The stop-commands token is random on purpose; goldens hold `TOKEN` instead."""
    for token in set(TOKEN.findall(output)):
        output = output.replace(token, "TOKEN")
    return output
