"""`ascend-doctor check` from the command line: exit codes, formats, languages, the probe's findings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ascend_doctor.check import run
from tests.conftest import run_cli
from tests.fake_machine import FakeMachine, healthy
from tests.test_check import UNDEFINED_TORCH_SYMBOL


@pytest.fixture
def on(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Point the command at a fake machine instead of this one."""

    def use(fake: FakeMachine) -> FakeMachine:
        real = run.run_checks
        monkeypatch.setattr(run, "run_checks", lambda _machine, **options: real(fake.machine(), **options))
        return fake

    return use


def mismatched(tmp_path: Path) -> FakeMachine:
    fake = healthy(tmp_path)
    (fake.site / "torch_npu-2.1.0.post10.dist-info").rmdir()
    fake.packages(torch_npu="2.5.1")
    return fake


def test_a_machine_that_fits_exits_0(tmp_path: Path, on: Any) -> None:
    on(healthy(tmp_path))
    result = run_cli("check")
    assert result.exit_code == 0, result.output
    first = result.stdout.splitlines()[0]
    assert first.startswith("Check: all ") and first.endswith(" checks passed")
    assert "✓ ok       versions.torch-torch_npu" in result.stdout


def test_an_error_exits_1_and_leads_the_report(tmp_path: Path, on: Any) -> None:
    on(mismatched(tmp_path))
    result = run_cli("check")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0] == "Check: 1 error(s), 0 warning(s): torch 2.1.0 does not fit torch_npu 2.5.1"
    at = next(i for i, line in enumerate(lines) if "versions.torch-torch_npu" in line)
    assert lines[at].startswith("✗ error")
    assert lines[at + 1].strip() == "saw: torch 2.1.0, torch_npu 2.5.1"
    assert any(line.strip().startswith("Fix: pip install torch==2.5.1") for line in lines[at:])


def test_json_lists_every_check(tmp_path: Path, on: Any) -> None:
    on(mismatched(tmp_path))
    result = run_cli("check", "--format", "json")
    document = json.loads(result.stdout)
    assert result.exit_code == 1
    assert document["schema_version"] == 1 and document["ascend_found"] is True
    checks = {check["id"]: check for check in document["checks"]}
    assert checks["versions.torch-torch_npu"]["status"] == "error"
    assert checks["versions.cann"]["status"] == "ok"
    assert document["counts"]["error"] == 1
    assert document["probe"] is None


def test_github_annotates_errors_and_warnings(tmp_path: Path, on: Any) -> None:
    fake = on(mismatched(tmp_path))
    fake.npu_smi("a3-busy")
    result = run_cli("check", "--format", "github")
    lines = result.stdout.splitlines()
    assert lines[0].startswith(
        "::error title=ascend-doctor check%3A versions.torch-torch_npu::torch 2.1.0 does not fit"
    )
    assert any(
        line.startswith("::warning title=ascend-doctor check%3A devices.busy::") and "632268" in line
        for line in lines
    )


def test_markdown_has_a_row_per_check_and_the_advice(tmp_path: Path, on: Any) -> None:
    on(mismatched(tmp_path))
    text = run_cli("check", "--format", "markdown").stdout
    assert "| ✗ error | `versions.torch-torch_npu` | torch 2.1.0 does not fit torch\\_npu 2.5.1 |" in text
    assert "### ✗ torch 2.1.0 does not fit torch\\_npu 2.5.1 (`versions.torch-torch_npu`)" in text


def test_export_lines_can_be_pasted(tmp_path: Path, on: Any) -> None:
    fake = on(healthy(tmp_path))
    del fake.environ["LD_LIBRARY_PATH"]
    text = run_cli("check").stdout
    assert f'Env: export LD_LIBRARY_PATH="{fake.toolkit}/lib64:' in text
    assert ':${LD_LIBRARY_PATH}"   # ' in text


def test_chinese(tmp_path: Path, on: Any) -> None:
    on(mismatched(tmp_path))
    text = run_cli("check", "--lang", "zh").stdout
    assert text.splitlines()[0] == "检查: 1 个错误，0 个警告：torch 2.1.0 与 torch_npu 2.5.1 不匹配"


def test_no_ascend_at_all(tmp_path: Path, on: Any) -> None:
    on(FakeMachine(tmp_path))
    result = run_cli("check")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("Check: No Ascend software or device found on this machine")
    assert lines[1].startswith("  1. Install the NPU driver and firmware")
    document = json.loads(run_cli("check", "-f", "json").stdout)
    assert document["ascend_found"] is False and len(document["hints"]) == 4


def test_deep_shows_the_engine_finding(tmp_path: Path, on: Any) -> None:
    fake = on(healthy(tmp_path))
    fake.python(probe_output=UNDEFINED_TORCH_SYMBOL, probe_exit=1)
    result = run_cli("check", "--deep")
    assert result.exit_code == 1
    assert "deep.probe" in result.stdout
    assert "What the --deep probe printed, diagnosed:" in result.stdout
    assert "Diagnosis: torch and torch_npu versions do not match (undefined torch symbol)" in result.stdout
    document = json.loads(run_cli("check", "--deep", "-f", "json").stdout)
    assert document["probe"]["findings"][0]["rule_id"] == "env.torch-torch-npu-mismatch"


def test_a_python_that_is_not_there_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli("check", "--python", str(tmp_path / "nope"))
    assert result.exit_code == 2
    assert "--python" in result.stderr
