"""CANN toolkit, NPU driver and firmware: found or not, and whether they fit each other (the
bundled table for CANN and driver; the version files themselves for driver and firmware)."""

from __future__ import annotations

from ascend_doctor.check.install import Driver, Firmware, Toolkit
from ascend_doctor.check.result import CheckResult, Status, ok, skipped
from ascend_doctor.check.versions import few
from ascend_doctor.model import Text
from ascend_doctor.rulebase import compat
from ascend_doctor.rulebase.version_parse import normal, release


def toolkit_result(toolkit: Toolkit | None) -> CheckResult:
    check = "versions.cann"
    if toolkit is None:
        return CheckResult(
            check,
            Status.ERROR,
            Text("No CANN toolkit found", "未找到 CANN toolkit"),
            "looked in $ASCEND_TOOLKIT_HOME, $ASCEND_HOME_PATH, /usr/local/Ascend, ~/Ascend",
            Text(
                "torch_npu, MindSpore and vLLM-Ascend all need the CANN toolkit.",
                "torch_npu、MindSpore 和 vLLM-Ascend 都依赖 CANN toolkit。",
            ),
            Text(
                "Install the CANN toolkit (and, from CANN 8.5.0, the ops package for your chip), then "
                "`source /usr/local/Ascend/ascend-toolkit/set_env.sh` (8.5+: "
                "/usr/local/Ascend/cann/set_env.sh).",
                "安装 CANN toolkit（CANN 8.5.0 起还需安装对应芯片的 ops 包），然后执行 "
                "`source /usr/local/Ascend/ascend-toolkit/set_env.sh`（8.5 及以后："
                "/usr/local/Ascend/cann/set_env.sh）。",
            ),
        )
    title = Text(f"CANN {toolkit.version}", f"CANN {toolkit.version}")
    return ok(
        check,
        title,
        f"CANN {toolkit.version} at {toolkit.home} ({toolkit.layout} layout; read from {toolkit.source})",
    )


def driver_result(driver: Driver | None, smi_driver: str | None) -> CheckResult:
    check = "versions.driver"
    if driver is not None:
        return ok(
            check,
            Text(f"NPU driver {driver.version}", f"NPU 驱动 {driver.version}"),
            f"driver {driver.version} (read from {driver.source})",
        )
    if smi_driver:
        return ok(
            check,
            Text(f"NPU driver {smi_driver}", f"NPU 驱动 {smi_driver}"),
            f"driver {smi_driver} (from npu-smi; /usr/local/Ascend/driver/version.info not readable)",
        )
    return CheckResult(
        check,
        Status.ERROR,
        Text("No NPU driver found", "未找到 NPU 驱动"),
        "/usr/local/Ascend/driver/version.info missing, no npu-smi on PATH",
        Text("Without the driver no NPU can be opened.", "没有驱动就无法打开 NPU。"),
        Text(
            "Install the Ascend HDK driver and firmware for your card on the host; in a container, mount "
            "/usr/local/Ascend/driver, /usr/local/bin/npu-smi and /etc/ascend_install.info.",
            "在宿主机安装与板卡匹配的 Ascend HDK 驱动和固件；容器中请挂载 /usr/local/Ascend/driver、"
            "/usr/local/bin/npu-smi 和 /etc/ascend_install.info。",
        ),
    )


def _driver_mismatch(cann: str, driver: str, listed: str, older: bool) -> CheckResult:
    fix = Text(
        f"Upgrade the NPU driver and firmware (Ascend HDK) to one published for CANN {cann}: {listed}.",
        f"将 NPU 驱动和固件（Ascend HDK）升级到与 CANN {cann} 配套的版本：{listed}。",
    )
    saw = f"CANN {cann}, driver {driver}"
    if older:
        title = Text(
            f"CANN {cann} needs a newer driver than {driver}", f"CANN {cann} 需要比 {driver} 更新的驱动"
        )
        why = Text(
            f"Every driver published for CANN {cann} is newer ({listed}); an older driver fails at device "
            "open or first kernel launch.",
            f"与 CANN {cann} 配套的驱动都更新（{listed}）；旧驱动会在打开设备或首次下发算子时失败。",
        )
        return CheckResult("versions.cann-driver", Status.ERROR, title, saw, why, fix)
    title = Text(
        f"Driver {driver} is not a published pairing for CANN {cann}",
        f"驱动 {driver} 不在 CANN {cann} 的官方配套列表中",
    )
    why = Text(f"Published for CANN {cann}: {listed}.", f"CANN {cann} 的配套驱动：{listed}。")
    return CheckResult("versions.cann-driver", Status.WARNING, title, saw, why, fix)


def cann_driver(toolkit: Toolkit | None, driver: str | None) -> CheckResult | None:
    """An error when the driver is older than every one published with this CANN; a warning when it
    is not one of them otherwise (newer, or between two): not wrong, but not a tested pairing."""
    if toolkit is None or not driver:
        return None
    cann = toolkit.version
    found = compat.driver_fit(cann, driver)
    saw = f"CANN {cann}, driver {driver}"
    if found is None:
        why = Text(
            f"The table has no driver pairing for CANN {cann}.",
            f"兼容性表中没有 CANN {cann} 的驱动配套信息。",
        )
        return skipped(
            "versions.cann-driver", Text("CANN / driver not checked", "未检查 CANN / 驱动"), why, saw
        )
    if found.matched:
        title = Text(f"Driver {driver} fits CANN {cann}", f"驱动 {driver} 与 CANN {cann} 匹配")
        return ok("versions.cann-driver", title, saw)
    return _driver_mismatch(cann, driver, few(found.known), found.older)


def _ranges(text: str) -> list[tuple[str, str]]:
    """`[7.0.0,7.2.99],[7.3,7.3.]` -> [("7.0.0", "7.2.99"), ("7.3", "7.3.")]"""
    found = []
    for part in text.replace(" ", "").split("],"):
        low, _, high = part.strip("[]").partition(",")
        if low:
            found.append((low, high or low))
    return found


def _in_range(version: str, low: str, high: str) -> bool:
    """`high` ending in a dot is a prefix (`24.1.` = any 24.1 build); else numbers compare."""
    have = normal(version)
    if high.endswith("."):
        return have == normal(low) or have.startswith(normal(high))
    number = release(version)
    return release(low) <= number[: len(release(high))] <= release(high)


def firmware_result(driver: Driver | None, firmware: Firmware | None) -> CheckResult | None:
    """Driver and firmware state the other's versions they accept (version.info); no table needed."""
    if driver is None or firmware is None:
        return None
    check = "versions.driver-firmware"
    saw = f"driver {driver.version} accepts firmware {driver.firmware_range or '?'}; "
    saw += f"firmware {firmware.version} accepts driver {firmware.driver_range or '?'}"
    refused = []
    if driver.firmware_range and not any(
        _in_range(firmware.version, *r) for r in _ranges(driver.firmware_range)
    ):
        refused.append(
            f"driver {driver.version} accepts firmware {driver.firmware_range}, not {firmware.version}"
        )
    if firmware.driver_range and not any(
        _in_range(driver.version, *r) for r in _ranges(firmware.driver_range)
    ):
        refused.append(
            f"firmware {firmware.version} accepts driver {firmware.driver_range}, not {driver.version}"
        )
    if not refused:
        return ok(check, Text("Driver and firmware fit", "驱动与固件匹配"), saw)
    return CheckResult(
        check,
        Status.ERROR,
        Text("Driver and firmware do not fit", "驱动与固件不匹配"),
        saw,
        Text(
            "; ".join(refused) + ". The runtime then fails with 'driver and firmware packages do not match'.",
            "；".join(refused) + "。运行时会报 “driver and firmware packages do not match”。",
        ),
        Text(
            "Install the driver and firmware of one Ascend HDK release (firmware first, then the driver, "
            "then reboot).",
            "安装同一 Ascend HDK 版本的驱动和固件（先固件、再驱动，然后重启）。",
        ),
    )
