"""Versions a log states at its top that do not fit together are a finding, with both lines."""

from __future__ import annotations

import pytest

from tests.conftest import diagnose_json

SEGFAULT = "Segmentation fault (core dumped)\n"


def _findings(text: str) -> list[dict]:
    report, _ = diagnose_json("-", stdin=text)
    return report["findings"]


def test_torch_and_torch_npu_of_different_releases_are_a_version_mismatch() -> None:
    text = "Package    Version\ntorch      2.3.1\ntorch-npu  2.1.0.post3\n\n$ python train.py\n" + SEGFAULT
    found = [f for f in _findings(text) if f["rule_id"] == "versions.stated-torch-npu-pair"]
    assert found and found[0]["category"] == "version_mismatch"
    assert [evidence["line"] for evidence in found[0]["evidence"]] == [2, 3]


def test_a_matching_pair_and_a_build_of_the_same_release_say_nothing() -> None:
    text = "torch version: 2.1.0+cpu\ntorch_npu version: 2.1.0.post3\n" + SEGFAULT
    assert not any(f["rule_id"].startswith("versions.stated-") for f in _findings(text))


def test_a_driver_a_release_older_than_its_cann_needs_is_a_version_mismatch() -> None:
    text = (
        "CANN 8.0.RC2, torch_npu 2.1.0.post6\n"
        "| npu-smi 23.0.6                   Version: 23.0.6                                       |\n"
        "[Error]: Failed to start the device.\n"
    )
    found = [f for f in _findings(text) if f["rule_id"] == "versions.stated-driver-older-than-cann"]
    assert found and found[0]["category"] == "version_mismatch"


def test_a_driver_of_the_same_release_year_is_not_called_too_old() -> None:
    text = "CANN 7.0.0\n| npu-smi 23.0.rc3                 Version: 23.0.rc3                |\n" + SEGFAULT
    assert not any(f["rule_id"].startswith("versions.stated-") for f in _findings(text))


NPU_SMI_23 = "| npu-smi 23.0.rc2                 Version: 23.0.rc2                                       |\n"


@pytest.mark.parametrize(
    ("cann_lines", "line"),
    [
        ("# version: 1.0\nruntime_running_version=[7.5.0.1.129:8.0.RC3]\n", 3),  # toolkit's version.cfg
        ("package_name=Ascend-cann-toolkit\nversion=8.0.RC3\ninnerversion=V100R001C19SPC001B1\n", 3),
    ],
    ids=["version.cfg", "ascend_toolkit_install.info"],
)
def test_the_cann_release_is_read_from_the_files_issue_templates_print(cann_lines: str, line: int) -> None:
    """vllm-ascend's issue template prints ascend_toolkit_install.info, sglang reads version.cfg."""
    found = [
        f
        for f in _findings(NPU_SMI_23 + cann_lines + SEGFAULT)
        if f["rule_id"] == "versions.stated-driver-older-than-cann"
    ]
    assert found and [evidence["line"] for evidence in found[0]["evidence"]] == [1, line]


def test_an_inner_build_number_is_not_read_as_the_cann_release() -> None:
    text = NPU_SMI_23 + "innerversion=V100R001C19SPC001B1\nopp Version=7.5.0.1.129\n" + SEGFAULT
    assert not any(f["rule_id"].startswith("versions.stated-") for f in _findings(text))
