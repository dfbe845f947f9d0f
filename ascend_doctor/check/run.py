"""All checks of one machine, in order: versions, environment, devices, and the `--deep` probe."""

from __future__ import annotations

from ascend_doctor import __version__
from ascend_doctor.check import devices, environment, hdk, mindspore, settings, versions
from ascend_doctor.check.install import find_driver, find_firmware, find_toolkit
from ascend_doctor.check.machine import Interpreter, Machine, ask_interpreter
from ascend_doctor.check.probe import PROBE_TIMEOUT, ProbeRun, run_probe
from ascend_doctor.check.result import CheckReport, CheckResult, Status, skipped
from ascend_doctor.model import Report, Text

LAST_LINES = 3
# Said when nothing of Ascend is on the machine, in install order.
INSTALL_HINTS = (
    Text(
        "Install the NPU driver and firmware (Ascend HDK) for your card on the host, firmware first; check "
        "with `npu-smi info`.",
        "在宿主机安装与板卡匹配的 NPU 驱动和固件（Ascend HDK），先装固件；用 `npu-smi info` 确认。",
    ),
    Text(
        "Install the CANN toolkit (from CANN 8.5.0 also the ops package for your chip) and `source "
        "/usr/local/Ascend/ascend-toolkit/set_env.sh` (8.5+: /usr/local/Ascend/cann/set_env.sh).",
        "安装 CANN toolkit（CANN 8.5.0 起还需安装对应芯片的 ops 包），并执行 `source "
        "/usr/local/Ascend/ascend-toolkit/set_env.sh`（8.5 及以后：/usr/local/Ascend/cann/set_env.sh）。",
    ),
    Text(
        "pip install the torch and torch_npu pair made for that CANN (torch_npu X.Y.Z goes with torch "
        "X.Y.Z).",
        "用 pip 安装与该 CANN 配套的 torch 和 torch_npu（torch_npu X.Y.Z 对应 torch X.Y.Z）。",
    ),
    Text(
        "In a container: pass --device /dev/davinciN, /dev/davinci_manager, /dev/devmm_svm, /dev/hisi_hdc "
        "and mount "
        "/usr/local/Ascend/driver and /usr/local/bin/npu-smi. Guide: "
        "https://www.hiascend.com/document/detail/zh/canncommercial/850/softwareinst/instg/instg_0008.html",
        "容器中：用 --device 传入 /dev/davinciN、/dev/davinci_manager、/dev/devmm_svm、/dev/hisi_hdc，并挂载 "
        "/usr/local/Ascend/driver 和 /usr/local/bin/npu-smi。安装指南："
        "https://www.hiascend.com/document/detail/zh/canncommercial/850/softwareinst/instg/instg_0008.html",
    ),
)


def _python_results(found: Interpreter | str) -> list[CheckResult]:
    if isinstance(found, str):
        why = Text(found, found)
        return [
            CheckResult(
                "versions.python",
                Status.ERROR,
                Text("Target Python not usable", "目标 Python 不可用"),
                found,
                why,
            )
        ]
    pieces = [
        versions.python_result(found),
        versions.packages_result(found),
        versions.torch_pair(found),
        versions.torch_npu_python(found),
    ]
    return [piece for piece in pieces if piece is not None]


def _probe_result(run: ProbeRun, timeout: float) -> CheckResult:
    check = "deep.probe"
    if run.passed:
        return CheckResult(
            check,
            Status.OK,
            Text("torch_npu ran an op on the NPU", "torch_npu 已在 NPU 上运行算子"),
            "probe: ok",
        )
    last = [line.strip() for line in run.output.splitlines() if line.strip()][-LAST_LINES:]
    ended = f"killed after {timeout:g} s" if run.returncode is None else f"exit code {run.returncode}"
    saw = f"probe {ended}: " + " | ".join(last or ["(no output)"])
    top = run.report.findings[0] if run.report.findings else None
    if top is None:
        title = Text("The probe failed; no known cause in its output", "探测失败；输出中没有已知原因")
        return CheckResult(check, Status.ERROR, title, saw)
    rule = top.rule
    return CheckResult(check, Status.ERROR, rule.title, saw, rule.cause, rule.fix, top.env)


def run_checks(
    machine: Machine, *, deep: bool = False, lang: str = "en", probe_timeout: float = PROBE_TIMEOUT
) -> CheckReport:
    """Examine `machine`; only the `--deep` probe starts anything heavier than `python -c` and `npu-smi`."""
    found = ask_interpreter(machine)
    python = found if isinstance(found, Interpreter) else None
    toolkit = find_toolkit(machine)
    driver = find_driver(machine)
    firmware = find_firmware(machine)
    smi, smi_result = devices.read_npu_smi(machine)
    results = _python_results(found)
    results += [hdk.toolkit_result(toolkit), hdk.driver_result(driver, smi.driver if smi else None)]
    optional = [
        versions.torch_npu_cann(python, toolkit),
        mindspore.mindspore_cann(python, toolkit),
        mindspore.mindspore_python(python),
        hdk.cann_driver(toolkit, driver.version if driver else smi.driver if smi else None),
        hdk.firmware_result(driver, firmware),
        versions.vllm_ascend_result(python, toolkit) if python else None,
    ]
    results += [result for result in optional if result is not None]
    results += [
        environment.cann_variables(machine, toolkit),
        environment.library_path(machine, toolkit),
        environment.python_dependencies(python, toolkit),
        settings.visible_devices(machine, smi),
        settings.hccl_variables(machine),
        settings.alloc_conf(machine),
        settings.libgomp_preload(machine, python),
        smi_result,
    ]
    if smi is not None and smi.chips:
        results += [devices.health(smi), devices.busy(smi)]
    results += [devices.device_nodes(machine), devices.disk_space(machine)]
    probe: Report | None = None
    if deep:
        result, probe = _deep(machine, python, lang, probe_timeout)
        results.append(result)
    ascend = bool(
        toolkit
        or driver
        or smi
        or any(r.id == "devices.dev-nodes" and r.status is Status.OK for r in results)
    )
    return CheckReport(tuple(results), ascend, probe, () if ascend else INSTALL_HINTS, __version__, lang)


def _deep(
    machine: Machine, python: Interpreter | None, lang: str, timeout: float
) -> tuple[CheckResult, Report | None]:
    title = Text("--deep probe", "--deep 探测")
    if python is None:
        return skipped(
            "deep.probe", title, Text("the target Python could not be asked", "无法查询目标 Python")
        ), None
    if "torch-npu" not in python.packages:
        return skipped("deep.probe", title, Text("torch_npu is not installed", "未安装 torch_npu")), None
    run = run_probe(machine, machine.interpreter() or python.executable, lang, timeout)
    return _probe_result(run, timeout), run.report
