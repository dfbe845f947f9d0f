"""Generated multi-node training jobs: one directory per node, one log per rank, for the merge tests.

The lines are those of fixtures/hccl-8rank-oom (torchrun, torch_npu, HCCL) and of the incident blocks
of the synthetic log generator that bench/ uses (EZ9999 inner errors, drvMemcpy failures, old plogs).
One rank (or two) fails; the other ranks time out waiting for the first, naming it, seconds later,
often in the same second as each other, so that ties between nodes are exercised.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import NamedTuple

SCENARIOS = ("oom", "aicore", "missing", "two-failures", "earlier-run")
DAY = "2024-06-11"


class Job(NamedTuple):
    """Where the job's logs are, and what a diagnosis must find."""

    root: Path
    nodes: tuple[str, ...]
    failing: int  # the rank that failed first
    node_of_failing: str


def _clock(second: float) -> tuple[str, str, str]:
    """(python logging, plog, torch_npu) forms of a time of day given in seconds."""
    whole = int(second)
    hms = f"{whole // 3600:02d}:{whole // 60 % 60:02d}:{whole % 60:02d}"
    fraction = int((second - whole) * 1_000_000)
    return (
        f"{DAY} {hms},{fraction // 1000:03d}",
        f"{DAY}-{hms}.{fraction // 1000:03d}.{fraction % 1000:03d}",
        f"{DAY}-{hms}",
    )


def _noise(rng: random.Random, rank: int, start: float, count: int) -> list[str]:
    lines = []
    for step in range(count):
        stamp = _clock(start + step * 125.09 + rng.random())[0]
        lines.append(
            f"{stamp} - INFO - train.py:201 - step {34 * (step + 1)}/2000 loss {2 + rng.random() * 9:.4f} "
            f"lr 2.00e-05 grad_norm {rng.random() * 2:.3f} tokens/s {3000 + rng.random() * 99:.1f}"
        )
        if rng.random() < 0.1:
            lines.append(
                "/root/miniconda3/envs/pt21/lib/python3.9/site-packages/torch_npu/utils/storage.py:38: "
                "UserWarning: TypedStorage is deprecated. It will be removed in the future."
            )
        if rng.random() < 0.1:
            lines.append(f"[rank{rank}]: HCCL_CONNECT_TIMEOUT not set, using default 120s")
    return lines


def _oom(rank: int, when: float) -> list[str]:
    py, _plog, _npu = _clock(when)
    return [
        f"{py} - INFO - train.py:176 - step 341: batch of 8 x 4096 tokens, packing ratio 1.00",
        "Traceback (most recent call last):",
        '  File "/home/job/llama/train.py", line 183, in main',
        f"RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU {rank % 8}; 60.97 GiB total capacity; "
        "56.41 GiB already allocated; 56.41 GiB current active; 1.12 GiB free; 58.80 GiB reserved in total by "
        "PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.",
    ]


def _aicore(rank: int, when: float) -> list[str]:
    _py, plog, npu = _clock(when)
    pid = 28100 + rank
    return [
        "RuntimeError: The Inner error is reported as above. The process exits for this inner error, and the "
        "current working operator name is aclnnFlashAttentionScore.",
        f"[ERROR] {npu} (PID:{pid}, Device:{rank % 8}, RankID:{rank}) ERR00100 PTA call acl api failed",
        "EZ9999: Inner Error!",
        f"EZ9999: [PID: {pid}] {plog} Op FlashAttentionScore does not has any binary."
        "[FUNC:Run][FILE:op_task.cc][LINE:1204]",
    ]


def _drv_memcpy(rank: int, when: float) -> list[str]:
    _py, plog, _npu = _clock(when)
    pid = 28100 + rank
    return [
        f"[ERROR] RUNTIME({pid},python3.9):{plog} [../runtime/feature/src/npu_driver.cc:1408]{pid + 97} "
        "MemCopySync:drvMemcpy failed: dst=0x12c0c0000000, destMax=4096, src=0x7f3c2a000000, size=4096, "
        "kind=1, drvRetCode=17!"
    ]


def _timeout(rank: int, peer: int, when: float) -> list[str]:
    _py, plog, npu = _clock(when)
    pid = 28100 + rank
    return [
        f"[ERROR] HCCL({pid},python):{plog} [heartbeat.cc:742] [{pid + 19}]Cluster Exception Location[IP/ID]:"
        f"[10.0.0.{peer // 8 + 1}/{peer}], Arrival Time:[Tue Jun 11 10:27:22 2024], Discoverer:"
        f"[10.0.0.{rank // 8 + 1}/{rank}], ExceptionType:[Heartbeat Lost Occurred], Possible Reason:1. "
        "Process has exited, 2. Network Disconnected",
        f"EI0002: [PID: {pid}] {plog} The wait execution of the Notify register times out. Reason: The Notify "
        f"register has not received the Notify record from remote rank [{peer}].base information: [streamID:[2], "
        "taskID[1042], tag[AllReduce_10.0.0.1%enp189s0f0_60000_0_1718071509084211], AlgType(level 0-1-2):"
        "[fullmesh-ring-ring].] task information: []",
        f"[ERROR] {npu} (PID:{pid}, Device:{rank % 8}, RankID:{rank}) ERR02200 DIST call hccl api failed.",
        "RuntimeError: wait:torch_npu/csrc/distributed/ProcessGroupHCCL.cpp:563 HCCL function error: "
        "HcclAllReduce(inputDataPtr, outputDataPtr, numel, hcclType, hcclReduceOp, comm, stream.stream(false)), "
        "error code is 9",
    ]


def _old_plog(rank: int) -> list[str]:
    """An error of the day before: a plog a restarted job left behind."""
    _py, plog, _npu = _clock(9 * 3600.0 + rank)
    plog = plog.replace("2024-06-11", "2024-06-09")
    return [
        f"[ERROR] TSDAEMON(2800{rank},tsdaemon):{plog} [tsd.cc:210]2800{rank} device {rank % 8} HBM multi-bit "
        "ECC error detected, addr=0x3f0000"
    ]


CAUSES = {"oom": _oom, "aicore": _aicore, "missing": _oom, "earlier-run": _oom}


def make_job(root: Path, ranks: int, nodes: int, scenario: str, seed: int) -> Job:
    """Write the logs of one job: node `npu-<n>` holds ranks n*k .. n*k+k-1 as `rank<r>.log`."""
    rng = random.Random(seed)
    per_node = ranks // nodes
    names = tuple(f"npu-{number}" for number in range(nodes))
    failing = rng.randrange(ranks)
    second = rng.choice([r for r in range(ranks) if r // per_node != failing // per_node] or [failing])
    failed_at = 10 * 3600 + 27 * 60 + 21 + rng.random()
    for rank in range(ranks):
        node = root / names[rank // per_node]
        node.mkdir(parents=True, exist_ok=True)
        lines = _noise(rng, rank, 10 * 3600 + 6 * 60, rng.randrange(3, 12))
        if rank == failing:
            if scenario == "missing":
                continue
            lines += CAUSES.get(scenario, _oom)(rank, failed_at)
        elif scenario == "two-failures" and rank == second:
            lines += _drv_memcpy(rank, failed_at + 2 + rng.random())
        else:
            lines += _timeout(rank, failing, failed_at + 5 + rng.randrange(4) + rng.random())
        (node / f"rank{rank}.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
        if scenario == "earlier-run" and rank % per_node == 0 and (rank == 0 or rng.random() < 0.5):
            plog = node / "debug" / "plog"
            plog.mkdir(parents=True, exist_ok=True)
            (plog / f"plog-2800{rank}_20240609090000000.log").write_text("\n".join(_old_plog(rank)) + "\n")
    return Job(root, names, failing, names[failing // per_node])
