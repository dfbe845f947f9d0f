"""Values the user sets: ASCEND_RT_VISIBLE_DEVICES against the devices present, HCCL variables in
their documented ranges, PYTORCH_NPU_ALLOC_CONF's syntax, and the aarch64 libgomp LD_PRELOAD."""

from __future__ import annotations

import glob
import os
import re

from ascend_doctor.check.machine import Interpreter, Machine
from ascend_doctor.check.npu_smi import NpuSmi
from ascend_doctor.check.result import CheckResult, Status, ok, skipped
from ascend_doctor.model import EnvRemedy, Text

# name -> (lowest, highest) integer the HCCL documentation accepts (env-vars knowledge).
HCCL_RANGES = {
    "HCCL_CONNECT_TIMEOUT": (120, 7200),
    "HCCL_EXEC_TIMEOUT": (0, 2147483647),
    "HCCL_BUFFSIZE": (1, 2147483647),
    "HCCL_WHITELIST_DISABLE": (0, 1),
    "HCCL_INTRA_ROCE_ENABLE": (0, 1),
    "HCCL_INTRA_PCIE_ENABLE": (0, 1),
}
NO_FIX = Text("", "")
_BOOL = ("True", "False")
# PYTORCH_NPU_ALLOC_CONF key -> a test of its value (torch_npu's allocator options).
ALLOC_KEYS = {
    "max_split_size_mb": lambda v: v.isdigit() and int(v) > 20,
    "garbage_collection_threshold": lambda v: _float_in(v, 0.0, 1.0, low_open=True, high_open=True),
    "expandable_segments": lambda v: v in _BOOL,
    "base_addr_aligned_kb": lambda v: v.isdigit() and int(v) <= 16,
    "page_size": lambda v: v == "1g",
    "segment_size_mb": lambda v: v.isdigit() and 20 <= int(v) <= 512,
    "large_segment_size_mb": lambda v: v.isdigit() and int(v) > 10,
    "roundup_power2_divisions": lambda v: bool(re.fullmatch(r"\d+|\[[^\]]*\]", v)),
    "multi_stream_lazy_reclaim": lambda v: v in _BOOL,
    "per_process_memory_fraction": lambda v: _float_in(v, 0.0, 1.0, low_open=True, high_open=False),
    "throw_on_npumalloc_oom": lambda v: v in _BOOL,
    "max_non_split_rounding_mb": lambda v: v.isdigit(),
    "release_lock_on_npumalloc": lambda v: v in _BOOL,
}
_LIBGOMP = ("*.libs/libgomp*.so*",)
SYSTEM_LIBGOMP = ("/usr/lib/aarch64-linux-gnu/libgomp.so.1", "/usr/lib64/libgomp.so.1")


def _float_in(value: str, low: float, high: float, *, low_open: bool, high_open: bool) -> bool:
    try:
        number = float(value)
    except ValueError:
        return False
    above = number > low if low_open else number >= low
    below = number < high if high_open else number <= high
    return above and below


def _unknown_devices(saw: str, bad: list[str], absent: list[str]) -> CheckResult:
    return CheckResult(
        "env.visible-devices",
        Status.ERROR,
        Text(
            "ASCEND_RT_VISIBLE_DEVICES names devices that are not there",
            "ASCEND_RT_VISIBLE_DEVICES 指定了不存在的设备",
        ),
        saw,
        Text(
            f"Not device ids: {', '.join(bad) or '-'}; beyond the devices present: "
            f"{', '.join(absent) or '-'}. "
            "The runtime stops reading the list at the first invalid id: fewer devices than meant are used.",
            f"不是设备号：{', '.join(bad) or '-'}；超出实际设备：{', '.join(absent) or '-'}。"
            "运行时在第一个无效编号处停止解析，实际可用设备会少于预期。",
        ),
        Text(
            "List existing device ids, comma-separated and ascending.",
            "列出存在的设备号，用逗号分隔并按升序排列。",
        ),
    )


def visible_devices(machine: Machine, smi: NpuSmi | None) -> CheckResult:
    """Ids that are numbers, of devices npu-smi shows (one per chip), ascending."""
    check = "env.visible-devices"
    value = machine.environ.get("ASCEND_RT_VISIBLE_DEVICES")
    if value is None:
        title = Text(
            "ASCEND_RT_VISIBLE_DEVICES unset: every device is visible",
            "未设置 ASCEND_RT_VISIBLE_DEVICES：所有设备可见",
        )
        return ok(check, title)
    saw = f"ASCEND_RT_VISIBLE_DEVICES={value}"
    ids = [part.strip() for part in value.split(",")]
    bad = [part for part in ids if not part.isdigit()]
    count = len(smi.chips) if smi and smi.chips else None
    absent = [part for part in ids if part.isdigit() and count is not None and int(part) >= count]
    if bad or absent:
        return _unknown_devices(saw + (f"; npu-smi shows {count} device(s)" if count else ""), bad, absent)
    numbers = [int(part) for part in ids]
    ascending = ",".join(map(str, sorted(set(numbers))))
    if ",".join(map(str, numbers)) != ascending:
        why = Text("The runtime expects ascending, distinct ids.", "运行时要求设备号升序且不重复。")
        remedy = EnvRemedy("ASCEND_RT_VISIBLE_DEVICES", ascending, Text("ascending", "升序"))
        title = Text("ASCEND_RT_VISIBLE_DEVICES is not ascending", "ASCEND_RT_VISIBLE_DEVICES 未按升序排列")
        return CheckResult(check, Status.WARNING, title, saw, why, NO_FIX, (remedy,))
    title = Text(
        "ASCEND_RT_VISIBLE_DEVICES names present devices", "ASCEND_RT_VISIBLE_DEVICES 指定的设备存在"
    )
    return ok(check, title, saw)


def hccl_variables(machine: Machine) -> CheckResult:
    check = "env.hccl"
    env = machine.environ
    given = {name: env[name] for name in HCCL_RANGES if name in env}
    saw = ", ".join(f"{name}={value}" for name, value in given.items()) or "no HCCL variable set"
    wrong = []
    for name, value in given.items():
        low, high = HCCL_RANGES[name]
        if not (value.strip().isdigit() and low <= int(value) <= high):
            wrong.append(f"{name}={value} (valid: {low}-{high})")
    connect, execute = given.get("HCCL_CONNECT_TIMEOUT", ""), given.get("HCCL_EXEC_TIMEOUT", "")
    if not wrong and connect.isdigit() and execute.isdigit() and 0 < int(execute) <= int(connect):
        return CheckResult(
            check,
            Status.WARNING,
            Text(
                "HCCL_CONNECT_TIMEOUT is not below HCCL_EXEC_TIMEOUT",
                "HCCL_CONNECT_TIMEOUT 不小于 HCCL_EXEC_TIMEOUT",
            ),
            saw,
            Text("Keep the link-setup timeout below the execution timeout.", "建链超时应小于执行超时。"),
        )
    if not given:
        return ok(
            check, Text("No HCCL variable set: HCCL's defaults apply", "未设置 HCCL 变量：使用默认值"), saw
        )
    if not wrong:
        return ok(check, Text("HCCL variables are in range", "HCCL 变量取值有效"), saw)
    return CheckResult(
        check,
        Status.ERROR,
        Text("HCCL variables out of range: " + ", ".join(wrong), "HCCL 变量超出范围：" + "，".join(wrong)),
        saw,
        Text(
            "HCCL rejects the value at communicator init or falls back to its default.",
            "HCCL 在初始化通信域时拒绝该值或回退到默认值。",
        ),
        Text("Set each within its range or unset it.", "将其设在有效范围内，或取消设置。"),
    )


def _alloc_items(value: str) -> list[str]:
    """Comma-separated `key:value` items; commas inside `[...]` belong to the item."""
    return [item for item in re.findall(r"(?:[^,\[]|\[[^\]]*\])+", value) if item.strip()]


def alloc_conf(machine: Machine) -> CheckResult:
    check = "env.alloc-conf"
    value = machine.environ.get("PYTORCH_NPU_ALLOC_CONF")
    if value is None:
        return ok(check, Text("PYTORCH_NPU_ALLOC_CONF unset", "未设置 PYTORCH_NPU_ALLOC_CONF"))
    saw = f"PYTORCH_NPU_ALLOC_CONF={value}"
    bad, unknown = [], []
    for item in _alloc_items(value):
        name, colon, setting = (part.strip() for part in item.partition(":"))
        if name not in ALLOC_KEYS:
            unknown.append(name)
        elif not colon or not ALLOC_KEYS[name](setting):
            bad.append(item.strip())
    if not bad and not unknown:
        return ok(
            check, Text("PYTORCH_NPU_ALLOC_CONF is well formed", "PYTORCH_NPU_ALLOC_CONF 格式正确"), saw
        )
    problem = "; ".join(
        part
        for part in (
            f"bad values: {', '.join(bad)}" if bad else "",
            f"unknown keys: {', '.join(unknown)}" if unknown else "",
        )
        if part
    )
    return CheckResult(
        check,
        Status.ERROR if bad else Status.WARNING,
        Text("PYTORCH_NPU_ALLOC_CONF has " + problem, "PYTORCH_NPU_ALLOC_CONF 有问题：" + problem),
        saw,
        Text(
            "The caching allocator parses it at the first allocation and stops the job on a value it "
            "refuses.",
            "缓存分配器在首次分配内存时解析它，遇到无效值会终止作业。",
        ),
        Text(
            "Write comma-separated key:value items, e.g. expandable_segments:True,max_split_size_mb:128.",
            "使用逗号分隔的 key:value，例如 expandable_segments:True,max_split_size_mb:128。",
        ),
    )


def libgomp_preload(machine: Machine, python: Interpreter | None) -> CheckResult:
    """On aarch64 a libgomp loaded late (scikit-learn's, torch's) can fail with 'cannot allocate memory
    in static TLS block'; preloading it avoids that."""
    check = "env.libgomp"
    title = Text("libgomp LD_PRELOAD (aarch64)", "libgomp LD_PRELOAD（aarch64）")
    if python is None or python.machine != "aarch64":
        arch = python.machine if python else "unknown"
        return skipped(
            check,
            title,
            Text(f"only aarch64 hosts need it; this is {arch}", f"仅 aarch64 主机需要；当前为 {arch}"),
        )
    preload = machine.environ.get("LD_PRELOAD", "")
    if "libgomp" in preload:
        return ok(check, Text("libgomp is preloaded", "已预加载 libgomp"), f"LD_PRELOAD={preload}")
    bundled = sorted(
        {
            found
            for directory in {d for _v, d in python.packages.values()}
            for pattern in _LIBGOMP
            for found in glob.glob(os.path.join(directory, pattern))
        }
    )
    system = [machine.at(path) for path in SYSTEM_LIBGOMP if os.path.exists(machine.at(path))]
    if not bundled:
        return ok(
            check,
            Text("No wheel bundles its own libgomp", "没有 wheel 自带 libgomp"),
            f"LD_PRELOAD={preload or '(unset)'}",
        )
    target = (system or bundled)[0]
    return CheckResult(
        check,
        Status.WARNING,
        Text("libgomp is not preloaded on aarch64", "aarch64 上未预加载 libgomp"),
        "bundled: " + ", ".join(bundled),
        Text(
            "Loaded late, a wheel's libgomp can fail with 'cannot allocate memory in static TLS block'.",
            "wheel 自带的 libgomp 若较晚加载，可能报 “cannot allocate memory in static TLS block”。",
        ),
        NO_FIX,
        (
            EnvRemedy(
                "LD_PRELOAD",
                f"{target}:${{LD_PRELOAD}}" if preload else target,
                Text("load libgomp first", "优先加载 libgomp"),
            ),
        ),
    )
