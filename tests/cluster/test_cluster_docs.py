"""The command lines of docs/cluster.md, run as written with local stand-ins for the cluster's tools
(tests/cluster/standin.py): four "nodes", each a directory and a process of its own, write their
reports into one directory, and the merge names the node and rank where the job failed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cluster.cluster_logs import make_job
from tests.conftest import REPO

DOC = REPO / "docs" / "cluster.md"
BLOCK = re.compile(r"<!-- cluster-test: (\S+) -->\n```sh\n(.*?)```", re.DOTALL)
BLOCKS = dict(BLOCK.findall(DOC.read_text(encoding="utf-8")))
TOOLS = ("srun", "pdsh", "ssh", "kubectl", "hostname")


def test_every_launcher_has_a_tested_block() -> None:
    assert set(BLOCKS) == {"slurm", "kubernetes", "pdsh", "ssh"}


def _bin(tmp_path: Path) -> Path:
    """The stand-ins, and an `ascend-doctor` that runs this checkout."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    standin = Path(__file__).with_name("standin.py")
    scripts = {tool: f'exec "{sys.executable}" "{standin}" {tool} "$@"' for tool in TOOLS}
    scripts["ascend-doctor"] = f'exec "{sys.executable}" -m ascend_doctor "$@"'
    for name, line in scripts.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{line}\n")
        (bin_dir / name).chmod(0o755)
    return bin_dir


def _homes(tmp_path: Path) -> tuple[Path, int, str]:
    """Four nodes' home directories: rank logs in ~/job-logs, an INFO-only plog in ~/ascend/log."""
    job = make_job(tmp_path / "job", 16, 4, "oom", seed=5)
    homes = tmp_path / "homes"
    for node in job.nodes:
        home = homes / node
        (home / "ascend" / "log" / "debug" / "plog").mkdir(parents=True)
        (home / "ascend" / "log" / "debug" / "plog" / "plog-100_20240611100000000.log").write_text(
            "[INFO] HCCL(100,python):2024-06-11-10:05:00.000.000 [hccl.cc:1]100 init done\n"
        )
        (job.root / node).rename(home / "job-logs")
    return homes, job.failing, job.node_of_failing


@pytest.mark.parametrize("launcher", sorted(BLOCKS))
def test_the_documented_command_lines_merge_the_nodes_reports(tmp_path: Path, launcher: str) -> None:
    homes, rank, node = _homes(tmp_path)
    shared = tmp_path / "shared"
    script = BLOCKS[launcher].replace("/shared/", f"{shared}/").replace("/job/logs", "$HOME/job-logs")
    env = {
        **os.environ,
        "PATH": f"{_bin(tmp_path)}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(REPO),
        "STANDIN_HOMES": str(homes),
        "SLURM_JOB_ID": "1234",
        "SLURM_JOB_NUM_NODES": "4",
    }
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run(["bash", "-e", "-c", script], cwd=work, env=env, capture_output=True, text=True)
    assert done.returncode == 1, done.stderr  # the merge found the cause
    reports = sorted(path.name for path in [*shared.rglob("*.json"), *work.rglob("*.json")])
    assert reports == ["npu-0.json", "npu-1.json", "npu-2.json", "npu-3.json"]
    verdict = done.stdout.splitlines()[0]
    assert f"started on node {node}, rank {rank} ({node}:" in verdict
    assert "15 other ranks timed out waiting for it" in verdict
    assert "read 20 input(s)" in done.stdout  # 16 rank logs and a plog per node
