"""`ascend-doctor check` on fake machines: each check catches what it is for, and says ok otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascend_doctor.check.result import CheckReport, CheckResult, Status
from ascend_doctor.check.run import run_checks
from tests.fake_machine import FakeMachine, healthy

UNDEFINED_TORCH_SYMBOL = (
    "Traceback (most recent call last):\n"
    '  File "<string>", line 2, in <module>\n'
    "ImportError: /usr/local/lib/python3.9/site-packages/torch_npu/lib/libtorch_npu.so: "
    "undefined symbol: _ZN5torch10ValueErrorC1EPKcz\n"
)


def results(report: CheckReport) -> dict[str, CheckResult]:
    return {result.id: result for result in report.results}


def not_ok(report: CheckReport) -> dict[str, Status]:
    return {r.id: r.status for r in report.results if r.status in (Status.ERROR, Status.WARNING)}


def test_a_machine_that_fits_passes_every_check(tmp_path: Path) -> None:
    report = run_checks(healthy(tmp_path).machine())
    assert not_ok(report) == {}
    assert not report.failed and report.ascend_found
    found = results(report)
    assert found["versions.cann"].title.en == "CANN 8.0.0"
    assert "ascend-toolkit layout" in found["versions.cann"].saw
    assert found["versions.cann-driver"].status is Status.OK
    assert found["versions.driver-firmware"].status is Status.OK
    assert "910B2 x2" in found["devices.npu-smi"].saw and "Atlas A2" in found["devices.npu-smi"].saw


def test_torch_that_does_not_fit_torch_npu_is_an_error_with_the_versions_that_fit(tmp_path: Path) -> None:
    fake = healthy(tmp_path)
    fake.packages(torch="2.1.0", torch_npu="2.5.1")
    (fake.site / "torch_npu-2.1.0.post10.dist-info").rmdir()
    result = results(run_checks(fake.machine()))["versions.torch-torch_npu"]
    assert result.status is Status.ERROR
    assert result.title.en == "torch 2.1.0 does not fit torch_npu 2.5.1"
    assert "torch 2.5.1" in result.why.en  # what torch_npu 2.5.1 is built for
    assert "2.1.0.post17" in result.why.en  # the newest torch_npu for the torch installed
    assert "pip install torch==2.5.1" in result.fix.en


def test_cann_on_a_driver_older_than_it_needs_is_an_error(tmp_path: Path) -> None:
    fake = FakeMachine(tmp_path)
    fake.legacy_toolkit("8.0.0")
    fake.driver("23.0.3")
    report = run_checks(fake.machine())
    result = results(report)["versions.cann-driver"]
    assert result.status is Status.ERROR
    assert result.title.en == "CANN 8.0.0 needs a newer driver than 23.0.3"
    assert "24.1.0" in result.fix.en
    assert report.failed


def test_a_driver_build_of_the_paired_release_fits(tmp_path: Path) -> None:
    fake = FakeMachine(tmp_path)
    fake.legacy_toolkit("8.0.RC3")
    fake.driver("24.1.rc3.7")  # a build of HDK 24.1.RC3, as the driver's version.info writes it
    assert results(run_checks(fake.machine()))["versions.cann-driver"].status is Status.OK


def test_version_cfg_is_read_when_the_install_info_file_is_absent(tmp_path: Path) -> None:
    fake = FakeMachine(tmp_path)
    fake.legacy_toolkit("8.0.0", info_file=False)
    result = results(run_checks(fake.machine()))["versions.cann"]
    assert result.title.en == "CANN 8.0.0" and result.saw.endswith("version.cfg)")


def test_the_cann_layout_of_8_5_and_later_is_found_with_its_set_env(tmp_path: Path) -> None:
    fake = FakeMachine(tmp_path)
    fake.cann_toolkit("9.0.0")
    found = results(run_checks(fake.machine()))
    assert found["versions.cann"].title.en == "CANN 9.0.0"
    assert "cann layout" in found["versions.cann"].saw
    variables = found["env.cann-variables"]
    assert variables.status is Status.ERROR
    assert variables.fix.en.startswith(f"source {fake.root}/usr/local/Ascend/cann/set_env.sh")


def test_set_env_not_sourced_gives_the_export_lines(tmp_path: Path) -> None:
    fake = healthy(tmp_path)
    for name in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH", "LD_LIBRARY_PATH"):
        del fake.environ[name]
    found = results(run_checks(fake.machine()))
    variables = found["env.cann-variables"]
    assert variables.status is Status.ERROR
    assert variables.title.en == "set_env.sh has not been sourced"
    assert {(env.name, env.value) for env in variables.env} >= {
        ("ASCEND_HOME_PATH", str(fake.toolkit)),
        ("ASCEND_OPP_PATH", f"{fake.toolkit}/opp"),
    }
    assert variables.fix.en.startswith(f"source {fake.root}/usr/local/Ascend/ascend-toolkit/set_env.sh")
    loader = found["env.ld-library-path"]
    assert loader.status is Status.ERROR
    assert loader.env[0].value.startswith(f"{fake.toolkit}/lib64:{fake.root}/usr/local/Ascend/driver/lib64")


def test_a_home_path_without_runtime_is_refused_as_torch_npu_would(tmp_path: Path) -> None:
    fake = healthy(tmp_path)
    assert fake.toolkit is not None
    (fake.toolkit / "runtime").rmdir()
    result = results(run_checks(fake.machine()))["env.cann-variables"]
    assert result.status is Status.ERROR and "$ASCEND_HOME_PATH/runtime" in result.why.en


def test_a_missing_cann_python_dependency_is_named(tmp_path: Path) -> None:
    fake = healthy(tmp_path)
    (fake.site / "decorator-1.0.dist-info").rmdir()
    result = results(run_checks(fake.machine()))["env.cann-python-deps"]
    assert result.status is Status.ERROR
    assert result.title.en == "Missing Python packages CANN needs: decorator"
    assert result.fix.en.endswith("-m pip install decorator")


def test_a_card_held_by_another_process_is_a_warning_naming_the_pid(tmp_path: Path) -> None:
    fake = healthy(tmp_path)
    fake.npu_smi("a3-busy")
    found = results(run_checks(fake.machine()))
    busy = found["devices.busy"]
    assert busy.status is Status.WARNING
    assert "pid 632268 on NPU 0" in busy.title.en and "kill 632268" in busy.fix.en
    assert "Ascend910 x2" in found["devices.npu-smi"].saw and "Atlas A3" in found["devices.npu-smi"].saw


def test_an_idle_310p_has_no_busy_card(tmp_path: Path) -> None:
    fake = healthy(tmp_path)
    fake.npu_smi("310p-idle")
    found = results(run_checks(fake.machine()))
    assert found["devices.busy"].status is Status.OK
    assert "NPU 6 chip 0: 1839/21525 MB" in found["devices.npu-smi"].saw


def test_npu_smi_without_devices_is_an_error(tmp_path: Path) -> None:
    fake = healthy(tmp_path)
    fake.npu_smi("no-device")
    found = results(run_checks(fake.machine()))
    assert found["devices.npu-smi"].status is Status.ERROR
    assert "ret is -8020" in found["devices.npu-smi"].saw
    assert "devices.health" not in found


@pytest.mark.parametrize(
    ("value", "status"),
    [("0,1", Status.OK), ("0,5", Status.ERROR), ("0,x", Status.ERROR), ("1,0", Status.WARNING)],
)
def test_visible_devices_against_the_devices_present(tmp_path: Path, value: str, status: Status) -> None:
    fake = healthy(tmp_path)  # two chips
    fake.environ["ASCEND_RT_VISIBLE_DEVICES"] = value
    assert results(run_checks(fake.machine()))["env.visible-devices"].status is status


@pytest.mark.parametrize(
    ("name", "value", "status"),
    [
        ("HCCL_CONNECT_TIMEOUT", "600", Status.OK),
        ("HCCL_CONNECT_TIMEOUT", "60", Status.ERROR),
        ("HCCL_EXEC_TIMEOUT", "-1", Status.ERROR),
        ("HCCL_BUFFSIZE", "0", Status.ERROR),
    ],
)
def test_hccl_variables_in_their_ranges(tmp_path: Path, name: str, value: str, status: Status) -> None:
    fake = healthy(tmp_path)
    fake.environ[name] = value
    assert results(run_checks(fake.machine()))["env.hccl"].status is status


def test_connect_timeout_not_below_exec_timeout_is_a_warning(tmp_path: Path) -> None:
    fake = healthy(tmp_path)
    fake.environ.update(HCCL_CONNECT_TIMEOUT="1800", HCCL_EXEC_TIMEOUT="900")
    assert results(run_checks(fake.machine()))["env.hccl"].status is Status.WARNING


@pytest.mark.parametrize(
    ("value", "status"),
    [
        ("expandable_segments:True", Status.OK),
        ("max_split_size_mb:128,garbage_collection_threshold:0.8", Status.OK),
        ("roundup_power2_divisions:[256:1,512:2],expandable_segments:False", Status.OK),
        ("max_split_size_mb:10", Status.ERROR),
        ("expandable_segments=True", Status.WARNING),
        ("expandable_segments:yes", Status.ERROR),
    ],
)
def test_alloc_conf_syntax(tmp_path: Path, value: str, status: Status) -> None:
    fake = healthy(tmp_path)
    fake.environ["PYTORCH_NPU_ALLOC_CONF"] = value
    assert results(run_checks(fake.machine()))["env.alloc-conf"].status is status


def test_driver_and_firmware_that_refuse_each_other(tmp_path: Path) -> None:
    fake = healthy(tmp_path)
    fake.driver("24.1.rc2.2", "[7.0.0,7.2.99]")
    fake.firmware("7.5.0.1.129", "24.1.rc3", "[23.0.0,23.0.0.],[24.0,24.0.],[24.1,24.1.]")
    result = results(run_checks(fake.machine()))["versions.driver-firmware"]
    assert result.status is Status.ERROR
    assert "driver 24.1.rc2.2 accepts firmware [7.0.0,7.2.99], not 7.5.0.1.129" in result.why.en


def test_aarch64_with_a_bundled_libgomp_wants_it_preloaded(tmp_path: Path) -> None:
    fake = healthy(tmp_path)
    fake.python_machine = "aarch64"
    libs = fake.site / "scikit_learn.libs"
    libs.mkdir()
    (libs / "libgomp-d22c30c5.so.1.0.0").write_text("")
    fake.python()
    result = results(run_checks(fake.machine()))["env.libgomp"]
    assert result.status is Status.WARNING
    assert result.env[0].name == "LD_PRELOAD" and result.env[0].value == str(
        libs / "libgomp-d22c30c5.so.1.0.0"
    )
    fake.environ["LD_PRELOAD"] = result.env[0].value
    assert results(run_checks(fake.machine()))["env.libgomp"].status is Status.OK


def test_vllm_ascend_with_a_vllm_it_was_not_built_for(tmp_path: Path) -> None:
    fake = healthy(tmp_path)
    fake.packages(vllm_ascend="0.9.1", vllm="0.10.0", torch="2.5.1", torch_npu="2.5.1.post1")
    for stale in ("torch-2.1.0", "torch_npu-2.1.0.post10"):
        (fake.site / f"{stale}.dist-info").rmdir()
    result = results(run_checks(fake.machine()))["versions.vllm-ascend"]
    assert result.status is Status.ERROR
    assert "vllm 0.10.0 (wants v0.9.1)" in result.title.en


def test_deep_probe_output_is_diagnosed_by_the_engine(tmp_path: Path) -> None:
    fake = healthy(tmp_path)
    fake.python(probe_output=UNDEFINED_TORCH_SYMBOL, probe_exit=1)
    report = run_checks(fake.machine(), deep=True)
    assert report.probe is not None
    assert [finding.rule.id for finding in report.probe.findings][:1] == ["env.torch-torch-npu-mismatch"]
    probe = results(report)["deep.probe"]
    assert probe.status is Status.ERROR
    assert probe.title == report.probe.findings[0].rule.title
    assert "exit code 1" in probe.saw and "undefined symbol" in probe.saw
    assert report.failed


def test_deep_probe_that_passes(tmp_path: Path) -> None:
    report = run_checks(healthy(tmp_path).machine(), deep=True)
    assert results(report)["deep.probe"].status is Status.OK
    assert report.probe is None or not report.probe.findings


def test_deep_probe_killed_at_its_time_limit(tmp_path: Path) -> None:
    fake = healthy(tmp_path)
    fake.python()
    script = (
        (fake.bin / "python3")
        .read_text()
        .replace("if 'torch_npu' in code:\n", "if 'torch_npu' in code:\n    import time; time.sleep(30)\n")
    )
    (fake.bin / "python3").write_text(script)
    report = run_checks(fake.machine(), deep=True, probe_timeout=1)
    probe = results(report)["deep.probe"]
    assert probe.status is Status.ERROR and "killed after 1 s" in probe.saw


def test_a_machine_without_ascend_says_so_and_fails(tmp_path: Path) -> None:
    report = run_checks(FakeMachine(tmp_path).machine())
    assert not report.ascend_found and report.failed
    assert report.hints
    found = results(report)
    assert found["versions.cann"].status is Status.ERROR
    assert found["devices.npu-smi"].status is Status.ERROR
    assert found["env.cann-variables"].status is Status.SKIPPED


def test_a_mindspore_paired_with_its_cann_fits(tmp_path: Path) -> None:
    fake = healthy(tmp_path)  # CANN 8.0.0, Python 3.10
    fake.packages(mindspore="2.4.10")
    found = results(run_checks(fake.machine()))
    assert found["versions.mindspore-cann"].status is Status.OK
    assert found["versions.mindspore-cann"].title.en == "MindSpore 2.4.10 fits CANN 8.0.0"
    assert found["versions.python-mindspore"].status is Status.OK


def test_a_mindspore_for_another_cann_series_is_an_error_with_the_versions_that_fit(tmp_path: Path) -> None:
    fake = healthy(tmp_path)
    fake.packages(mindspore="2.6.0")
    report = run_checks(fake.machine())
    result = results(report)["versions.mindspore-cann"]
    assert result.status is Status.ERROR and report.failed
    assert result.title.en == "MindSpore 2.6.0 does not fit CANN 8.0.0"
    assert "CANN 8.1.RC1.beta1" in result.why.en  # what MindSpore 2.6.0 is paired with
    assert "For CANN 8.0.0: MindSpore 2.5.0, 2.4.10" in result.why.en
    assert "pip install mindspore==2.5.0" in result.fix.en


def test_a_mindspore_paired_with_another_release_of_the_same_cann_series_is_a_warning(tmp_path: Path) -> None:
    fake = healthy(tmp_path)
    fake.packages(mindspore="2.4.0")  # paired with 8.0.RC3, the machine has 8.0.0
    result = results(run_checks(fake.machine()))["versions.mindspore-cann"]
    assert result.status is Status.WARNING
    assert "8.0.RC3" in result.why.en


def test_a_python_outside_the_mindspore_range_is_a_warning(tmp_path: Path) -> None:
    fake = FakeMachine(tmp_path)
    fake.legacy_toolkit("7.0.0")
    fake.packages(mindspore="2.2.14")  # the r2.2 install page: CANN 7.0.0.beta1, Python 3.7-3.9
    found = results(run_checks(fake.machine()))
    assert found["versions.mindspore-cann"].status is Status.OK
    assert found["versions.python-mindspore"].status is Status.WARNING
    assert "3.7, 3.8, 3.9" in found["versions.python-mindspore"].why.en


def test_mindspore_not_installed_is_skipped(tmp_path: Path) -> None:
    found = results(run_checks(healthy(tmp_path).machine()))
    assert found["versions.mindspore-cann"].status is Status.SKIPPED
    assert "versions.python-mindspore" not in found
