"""`ascend-doctor merge` as a user runs it: every format, exit codes, and clear words for reports
that cannot be merged (other schema, other rules, not a report at all)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from ascend_doctor import __version__
from ascend_doctor.render import RENDERERS
from tests.cluster.cluster_logs import make_job
from tests.conftest import run_cli
from tests.render.test_sarif import valid


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 16-rank job on 4 nodes, each node's report written by `diagnose --node ... -f json`."""
    root = tmp_path_factory.mktemp("job")
    job = make_job(root / "logs", 16, 4, "oom", seed=11)
    out = root / "reports"
    out.mkdir()
    for node in job.nodes:
        result = run_cli(
            "diagnose",
            str(root / "logs" / node),
            "--node",
            node,
            "-f",
            "json",
            "-o",
            str(out / f"{node}.json"),
        )
        assert result.exit_code == 1, result.stderr
    (root / "failing").write_text(f"{job.node_of_failing} {job.failing}")
    return out


def _failing(reports: Path) -> tuple[str, int]:
    node, rank = (reports.parent / "failing").read_text().split()
    return node, int(rank)


def _copy(reports: Path, tmp_path: Path, change: Any = None) -> Path:
    """The reports in a new directory; `change` edits the first one's document."""
    out = tmp_path / "copy"
    out.mkdir()
    for number, path in enumerate(sorted(reports.glob("*.json"))):
        document = json.loads(path.read_text(encoding="utf-8"))
        if number == 0 and change is not None:
            change(document)
        (out / path.name).write_text(json.dumps(document), encoding="utf-8")
    return out


def test_the_verdict_names_the_node_and_rank_where_it_started(reports: Path) -> None:
    node, rank = _failing(reports)
    result = run_cli("merge", str(reports))
    assert result.exit_code == 1, result.stderr
    first = result.stdout.splitlines()[0]
    assert f"started on node {node}, rank {rank} ({node}:" in first
    assert "15 other ranks timed out waiting for it" in first
    assert "read 16 input(s)" in result.stdout


@pytest.mark.parametrize("fmt", sorted(RENDERERS))
def test_every_format_works_on_a_merge(reports: Path, tmp_path: Path, fmt: str) -> None:
    node, _rank = _failing(reports)
    out = tmp_path / f"merged.{fmt}"
    result = run_cli("merge", str(reports), "-f", fmt, "-o", str(out))
    assert (result.exit_code, result.stdout) == (1, ""), result.stderr
    text = out.read_text(encoding="utf-8")
    assert "memory.npu-out-of-memory" in text
    assert f"{node}%3A" in text if fmt == "sarif" else f"{node}:" in text  # a URI quotes the colon
    if fmt == "sarif":
        valid(text)
    if fmt == "junit":
        ET.fromstring(text)
    assert run_cli("merge", str(reports), "-f", fmt, "--exit-zero").exit_code == 0


def test_a_merged_json_report_is_schema_2_with_nodes_per_input(reports: Path) -> None:
    result = run_cli("merge", str(reports), "-f", "json")
    document = json.loads(result.stdout)
    assert document["schema_version"] == 2
    assert document["node"] is None
    assert {item["node"] for item in document["inputs"]} == {"npu-0", "npu-1", "npu-2", "npu-3"}
    assert all(item["path"].startswith(item["node"] + ":") for item in document["inputs"])
    top = document["findings"][0]
    assert top["nodes"] == [_failing(reports)[0]]


def test_merge_in_chinese(reports: Path) -> None:
    node, rank = _failing(reports)
    result = run_cli("merge", str(reports), "--lang", "zh")
    assert f"节点 {node} 的 rank {rank}" in result.stdout.splitlines()[0]


def test_a_schema_1_report_is_named_with_what_to_do_and_the_rest_is_merged(
    reports: Path, tmp_path: Path
) -> None:
    copy = _copy(reports, tmp_path, lambda document: document.update(schema_version=1))
    result = run_cli("merge", str(copy))
    assert result.exit_code == 2
    assert "npu-0.json: cannot merge this report: report schema 1" in result.stderr
    assert f"diagnose that node again with ascend-doctor {__version__}" in result.stderr
    assert result.stdout.startswith("Diagnosis: ")


def test_a_report_of_a_newer_schema_asks_for_an_upgrade(reports: Path, tmp_path: Path) -> None:
    def newer(document: dict[str, Any]) -> None:
        document.update(schema_version=3)
        document["tool"]["version"] = "9.0.0"

    result = run_cli("merge", str(_copy(reports, tmp_path, newer)))
    assert result.exit_code == 2
    assert "written by a newer ascend-doctor (9.0.0, report schema 3)" in result.stderr
    assert "upgrade it where you merge" in result.stderr


def test_reports_of_other_versions_merge_with_a_warning(reports: Path, tmp_path: Path) -> None:
    def older(document: dict[str, Any]) -> None:
        document["tool"]["version"] = "0.0.9"

    result = run_cli("merge", str(_copy(reports, tmp_path, older)))
    assert result.exit_code == 1
    assert "different ascend-doctor versions (0.0.9: npu-0;" in result.stderr


def test_rules_that_rank_differently_stop_the_merge(reports: Path, tmp_path: Path) -> None:
    def demoted(document: dict[str, Any]) -> None:
        document["tool"]["version"] = "0.0.9"
        for rule in document["rules_matched"].values():
            rule["severity"] = "warning"

    result = run_cli("merge", str(_copy(reports, tmp_path, demoted)))
    assert result.exit_code == 2
    assert "ascend-doctor: error: rule " in result.stderr
    assert "(ascend-doctor 0.0.9)" in result.stderr
    assert "its severity differ" in result.stderr
    assert result.stdout == ""


def test_what_is_not_a_report_is_named_and_nothing_merged_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "notes.json").write_text('{"hello": 1}')
    (tmp_path / "broken.json").write_text("{")
    result = run_cli("merge", str(tmp_path))
    assert result.exit_code == 2
    assert "broken.json: cannot merge this report: not a JSON report" in result.stderr
    assert "notes.json: cannot merge this report: not an ascend-doctor JSON report" in result.stderr
    assert "nothing to merge" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_malformed_report_is_named_not_a_traceback(reports: Path, tmp_path: Path) -> None:
    def broken(document: dict[str, Any]) -> None:
        document["inputs"][0]["hits"] = [["no.such-rule", 1, 0, None]]

    result = run_cli("merge", str(_copy(reports, tmp_path, broken)))
    assert result.exit_code == 2
    assert "not a valid schema 2 report" in result.stderr and "no.such-rule" in result.stderr


def test_an_empty_directory_and_a_missing_file_are_clear_errors(tmp_path: Path) -> None:
    result = run_cli("merge", str(tmp_path))
    assert (result.exit_code, result.stderr.strip()) == (
        2,
        f"ascend-doctor: error: no report (*.json) in the directory {tmp_path}",
    )
    result = run_cli("merge", str(tmp_path / "gone.json"))
    assert result.exit_code == 2
    assert "gone.json: cannot merge this report: cannot read: No such file or directory" in result.stderr


def test_merge_needs_a_report() -> None:
    result = run_cli("merge")
    assert result.exit_code == 2
    assert "Missing argument" in result.stderr
