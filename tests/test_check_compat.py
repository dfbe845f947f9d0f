"""The bundled compatibility table loads and agrees with itself; version strings compare as Ascend
writes them; `npu-smi info` tables of each hardware shape parse."""

from __future__ import annotations

import pytest

from ascend_doctor.check.npu_smi import parse
from ascend_doctor.rulebase import compat
from ascend_doctor.rulebase.version_parse import fits, key, normal, release
from tests.fake_machine import SMI

# Rows whose torch is not the torch_npu's own X.Y.Z, as the sources print them (compat README,
# contradictions 2 and 3): 1.5.0.post3 listed with PyTorch 1.8.1; the 2.5.0 pre-listing for torch 2.5.1.
ODD_PAIRS = {("1.5.0.post3", "1.8.1"), ("2.5.0", "2.5.1")}


def test_every_section_has_rows_and_every_row_its_source() -> None:
    table = compat.table()
    assert set(table) == {
        "torch_npu",
        "vllm_ascend",
        "cann_driver",
        "soc_families",
        "cann_python_deps",
        "mindspore",
    }
    for name, rows in table.items():
        assert rows, name
        assert all(row["source"] for row in rows), name


def test_torch_npu_x_y_z_pairs_with_torch_x_y_z() -> None:
    odd = {
        (row["torch_npu"], row["torch"])
        for row in compat.table()["torch_npu"]
        if release(row["torch_npu"])[:3] != release(row["torch"])[:3]
    }
    assert odd == ODD_PAIRS


def test_every_version_in_the_table_parses() -> None:
    for row in compat.table()["torch_npu"]:
        assert (len(release(row["torch_npu"])) >= 3 and row["cann"] and row["python"]) or row[
            "status"
        ] == "eol"
    for row in compat.table()["cann_driver"]:
        assert row["driver"] and all(release(version) for version in row["driver"]), row
        assert release(row["cann"]), row
    for row in compat.table()["mindspore"]:
        assert release(row["mindspore"]) and all(release(cann) for cann in row["cann"]), row
        assert all(len(release(minor)) == 2 for minor in row["python"]), row


def test_the_mindspore_sources_agree_where_both_pair_a_release() -> None:
    """The install page and the MindFormers matrix name the same CANN (community or commercial name)."""
    for version in ("2.4.10", "2.4.0", "2.3.0", "2.6.0rc1"):
        rows = compat.mindspore_rows(version)
        assert {row["kind"] for row in rows} == {"mindspore_install_doc", "mindformers_matrix"}, version
        assert len({fits_name for row in rows for fits_name in map(normal, row["cann"])}) == 1, version


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("24.1.RC3", "24.1.0"),
        ("24.1.rc2", "24.1.rc2.2"),
        ("2.1.0rc1", "2.1.0"),
        ("2.1.0", "2.1.0.post10"),
        ("8.0.RC3", "8.0.0"),
        ("9.0.0-beta.1", "9.0.0"),
        ("23.0.3", "24.1.0"),
    ],
)
def test_versions_order_as_released(older: str, newer: str) -> None:
    assert key(older) < key(newer)


@pytest.mark.parametrize(
    ("version", "pattern", "expected"),
    [
        ("24.1.rc2.2", "24.1.RC2", True),  # a driver build of an HDK release
        ("8.0.0.beta1", "8.0.0", True),  # the community edition
        ("25.5.1", "25.5.X", True),
        ("8.5.0.alpha001", "8.5.0", False),  # a pre-release is not the release
        ("9.0.0-beta.1", "9.0.0", False),
        ("24.1.rc3", "24.1.RC2", False),
    ],
)
def test_fits(version: str, pattern: str, expected: bool) -> None:
    assert fits(version, pattern) is expected


def test_npu_smi_a2_table() -> None:
    smi = parse((SMI / "npu-smi-a2-healthy.txt").read_text())
    assert smi is not None and smi.driver == "24.1.0.3"
    assert [(c.npu, c.chip, c.name, c.health, c.memory_used, c.memory_total) for c in smi.chips] == [
        (0, 0, "910B2", "OK", 3397, 65536),
        (1, 0, "910B2", "OK", 3395, 65536),
    ]
    assert smi.processes == ()


def test_npu_smi_a3_table_with_two_chips_a_card_and_a_process() -> None:
    smi = parse((SMI / "npu-smi-a3-busy.txt").read_text())
    assert smi is not None and smi.cards == (0,)
    assert [(c.chip, c.memory_used) for c in smi.chips] == [(0, 3419), (1, 2874)]
    assert [(p.npu, p.chip, p.pid, p.name, p.memory_mb) for p in smi.processes] == [
        (0, 0, 632268, "python3.1", 197)
    ]


def test_npu_smi_without_a_table() -> None:
    assert parse((SMI / "npu-smi-no-device.txt").read_text()) is None


def test_chip_families() -> None:
    assert compat.soc_family("910B2C") is not None and "A2" in compat.soc_family("910B2C")
    assert "first generation" in (compat.soc_family("910ProB") or "")
    assert compat.soc_family("H100") is None
