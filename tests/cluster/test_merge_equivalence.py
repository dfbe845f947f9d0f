"""`merge(diagnose(node_1), ..., diagnose(node_n))` says what `diagnose(all logs)` says: the same
findings in the same order, with the same ranks, counts, folded rules, evidence and verdict; only
paths gain their node (`npu-3:...`) and the verdict names the node where the failure started."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from ascend_doctor.cluster.merge import merge
from ascend_doctor.engine import ScanOptions, diagnose
from ascend_doctor.model import Report
from ascend_doctor.render.json import report_dict
from ascend_doctor.rulebase.load import RuleBase, load_rulebase
from tests.cluster.cluster_logs import SCENARIOS, make_job
from tests.conftest import FIXTURES


@pytest.fixture(scope="module")
def rulebase() -> RuleBase:
    return load_rulebase(())


def node_reports(rulebase: RuleBase, nodes: dict[str, Sequence[Path]], out: Path) -> Path:
    """Diagnose each node's paths on their own and write its JSON report as `out/<node>.json`."""
    out.mkdir()
    for node, paths in nodes.items():
        report = diagnose([str(path) for path in paths], rulebase, ScanOptions(jobs=1))._replace(node=node)
        (out / f"{node}.json").write_text(json.dumps(report_dict(report)), encoding="utf-8")
    return out


def _unnoded(text: str, nodes: Sequence[str]) -> str:
    for node in nodes:
        text = text.replace(f"node {node}, ", "").replace(f"{node}:", "")
    return text


def summary(report: Report, nodes: Sequence[str] = ()) -> dict[str, Any]:
    """What a user reads in a report, with the node names a merge adds taken out."""
    document = report_dict(report)
    return {
        "verdict": _unnoded(document["verdict"], nodes),
        "warnings": [_unnoded(warning, nodes) for warning in report.warnings],
        "waited_for": report.waited_for,
        "findings": [
            (
                f.rule.id,
                f.role,
                f.related_to,
                f.count,
                f.ranks,
                f.also,
                f.confidence,
                [(_unnoded(e.path, nodes), e.line, e.rank, e.text) for e in f.evidence],
                [(env.name, env.value) for env in f.env],
            )
            for f in report.findings
        ],
    }


def assert_equivalent(rulebase: RuleBase, nodes: dict[str, Sequence[Path]], tmp_path: Path) -> Report:
    """The merge of the nodes' reports against one diagnosis of all their paths; returns the merge."""
    whole = diagnose([str(path) for paths in nodes.values() for path in paths], rulebase, ScanOptions(jobs=1))
    merged = merge([str(node_reports(rulebase, nodes, tmp_path / "reports"))]).report
    assert summary(merged, list(nodes)) == summary(whole)
    assert whole.findings, "a job that failed must have findings"
    return merged


@pytest.mark.parametrize("nodes", [2, 4, 8])
def test_the_8_rank_fixture_split_over_nodes(rulebase: RuleBase, tmp_path: Path, nodes: int) -> None:
    logs = sorted((FIXTURES / "hccl-8rank-oom").iterdir(), key=lambda path: int(path.stem[4:]))
    per_node = len(logs) // nodes
    split = {f"npu-{n}": logs[n * per_node : (n + 1) * per_node] for n in range(nodes)}
    merged = assert_equivalent(rulebase, split, tmp_path)
    assert merged.findings[0].rule.id == "memory.npu-out-of-memory"
    node = f"npu-{5 // per_node}"
    assert f"started on node {node}, rank 5 ({node}:" in report_dict(merged)["verdict"]


def test_fixtures_of_different_jobs_on_different_nodes(rulebase: RuleBase, tmp_path: Path) -> None:
    """Two runs months apart: the later one's failure leads, the earlier one is named as such."""
    nodes = {
        "npu-a": [FIXTURES / "example-train.log"],
        "npu-b": [FIXTURES / "hccl-8rank-oom"],
        "npu-c": [FIXTURES / "runtime-plog-aicore", FIXTURES / "device-heartbeat-lost-hccl-victims.log"],
    }
    merged = assert_equivalent(rulebase, nodes, tmp_path)
    assert any("more than one run" in warning for warning in merged.warnings)


def _job_nodes(root: Path) -> dict[str, list[Path]]:
    return {path.name: [path] for path in sorted(root.iterdir())}


CLUSTERS = [
    (ranks, nodes, scenario)
    for ranks, nodes in [(8, 2), (16, 4), (64, 8), (128, 16)]
    for scenario in SCENARIOS
] + [(512, 64, "two-failures"), (512, 64, "missing")]


@pytest.mark.parametrize(("ranks", "nodes", "scenario"), CLUSTERS)
def test_generated_clusters(
    rulebase: RuleBase, tmp_path: Path, scenario: str, ranks: int, nodes: int
) -> None:
    job = make_job(tmp_path / "job", ranks, nodes, scenario, seed=ranks * 31 + nodes + len(scenario))
    merged = assert_equivalent(rulebase, _job_nodes(job.root), tmp_path)
    verdict = report_dict(merged)["verdict"]
    if scenario == "missing":
        assert f"timed out waiting for rank {job.failing}" in verdict
    else:
        assert f"started on node {job.node_of_failing}, rank {job.failing} (" in verdict
        assert merged.findings[0].ranks == (job.failing,)


def test_a_merged_report_merges_again_as_its_nodes_would(rulebase: RuleBase, tmp_path: Path) -> None:
    """Racks merged first, then the racks: the same as merging every node at once."""
    job = make_job(tmp_path / "job", 32, 8, "oom", seed=7)
    nodes = _job_nodes(job.root)
    reports = node_reports(rulebase, nodes, tmp_path / "reports")
    racks = tmp_path / "racks"
    racks.mkdir()
    for rack in range(2):
        members = [str(reports / f"{node}.json") for node in list(nodes)[rack * 4 : rack * 4 + 4]]
        (racks / f"rack{rack}.json").write_text(json.dumps(report_dict(merge(members).report)))
    assert summary(merge([str(racks)]).report) == summary(merge([str(reports)]).report)


def test_the_same_logs_in_two_reports_are_counted_once(rulebase: RuleBase, tmp_path: Path) -> None:
    job = make_job(tmp_path / "job", 8, 2, "oom", seed=3)
    reports = node_reports(rulebase, _job_nodes(job.root), tmp_path / "reports")
    shutil.copy(reports / "npu-0.json", tmp_path / "again.json")
    once = merge([str(reports)]).report
    twice = merge([str(reports), str(tmp_path / "again.json")]).report
    assert [f.count for f in twice.findings] == [f.count for f in once.findings]
    skipped = [record for record in twice.inputs if record.skipped]
    assert skipped and all("read already, in the report" in record.reason for record in skipped)
