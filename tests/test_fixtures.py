"""Every fixture log diagnosed end to end: the ranked rule ids, the top finding, the exit code."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.conftest import FIXTURES, run_cli

EXPECTATIONS = sorted(FIXTURES.glob("*.expect.yaml"))


def _target(expect: Path) -> Path:
    case = expect.name[: -len(".expect.yaml")]
    directory = expect.parent / case
    if directory.is_dir():
        return directory
    candidates = sorted(p for p in expect.parent.glob(case + ".*") if p != expect and p.is_file())
    assert candidates, f"no log beside {expect.name}"
    return candidates[0]


def test_there_are_fixtures() -> None:
    assert len(EXPECTATIONS) >= 5


@pytest.mark.parametrize("expect_path", EXPECTATIONS, ids=[p.name[:-12] for p in EXPECTATIONS])
def test_fixture(expect_path: Path) -> None:
    import json

    expect = yaml.safe_load(expect_path.read_text(encoding="utf-8"))
    target = _target(expect_path)
    result = run_cli("diagnose", "--format", "json", "--jobs", "1", str(target))
    assert result.exit_code == expect["exit_code"], result.stderr
    report = json.loads(result.stdout)
    assert [f["rule_id"] for f in report["findings"]] == expect["findings"]
    top = expect.get("top")
    if not top:
        assert not report["findings"]
        return
    found = report["findings"][0]
    first = found["evidence"][0]
    assert found["rule_id"] == top["rule"]
    assert found["category"] == top["category"]
    if "line" in top:
        assert first["line"] == top["line"]
    if "path" in top:
        assert Path(first["path"]).relative_to(target).as_posix() == top["path"]
    if "rank" in top:
        assert first.get("rank") == top["rank"]
