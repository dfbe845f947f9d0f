"""Device checks: `npu-smi info` (chips, health, HBM in use, who holds each card), the /dev/davinci
nodes this user can open, and the free disk where CANN writes logs and compiled kernels."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from collections import Counter

from ascend_doctor.check.machine import Machine
from ascend_doctor.check.npu_smi import NpuSmi, parse
from ascend_doctor.check.result import CheckResult, Status, ok
from ascend_doctor.model import Text
from ascend_doctor.rulebase import compat

SMI_TIMEOUT = 15.0
CONTROL_NODES = ("davinci_manager", "devmm_svm", "hisi_hdc")
LOW_DISK = 1024**3  # bytes free below which a run of logs and compiled kernels may fill the disk
NO_FIX = Text("", "")


NO_NPU_SMI = CheckResult(
    "devices.npu-smi",
    Status.ERROR,
    Text("npu-smi not found", "未找到 npu-smi"),
    "no npu-smi on PATH",
    Text(
        "npu-smi comes with the NPU driver; without it no device can be seen.",
        "npu-smi 随 NPU 驱动安装；没有它就看不到设备。",
    ),
    Text(
        "Install the NPU driver; in a container, mount /usr/local/bin/npu-smi and /usr/local/Ascend/driver.",
        "安装 NPU 驱动；容器中请挂载 /usr/local/bin/npu-smi 和 /usr/local/Ascend/driver。",
    ),
)
NO_DEVICE = CheckResult(
    "devices.npu-smi",
    Status.ERROR,
    Text("npu-smi sees no device", "npu-smi 看不到任何设备"),
    "",
    Text(
        "The driver is not loaded, or this container was started without the /dev/davinci devices.",
        "驱动未加载，或容器启动时没有传入 /dev/davinci 设备。",
    ),
    Text(
        "On the host: check `npu-smi info` and the driver (dmesg). In a container: pass --device "
        "/dev/davinciN, /dev/davinci_manager, /dev/devmm_svm and /dev/hisi_hdc.",
        "在宿主机上检查 `npu-smi info` 和驱动（dmesg）。容器中：用 --device 传入 /dev/davinciN、"
        "/dev/davinci_manager、/dev/devmm_svm 和 /dev/hisi_hdc。",
    ),
)


def _npu_smi_info(machine: Machine, program: str) -> str:
    """What `npu-smi info` printed, both streams (a failure says why on either)."""
    try:
        done = subprocess.run(
            [program, "info"],
            env=dict(machine.environ),
            capture_output=True,
            text=True,
            timeout=SMI_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    return done.stdout + done.stderr


def read_npu_smi(machine: Machine) -> tuple[NpuSmi | None, CheckResult]:
    """The parsed table (None when not had) and the check saying what it showed."""
    program = machine.which("npu-smi")
    if program is None:
        return None, NO_NPU_SMI
    output = _npu_smi_info(machine, program)
    smi = parse(output)
    if smi is None or not smi.chips:
        last = next((line.strip() for line in reversed(output.splitlines()) if line.strip()), "(no output)")
        return smi, NO_DEVICE._replace(saw=f"{program} info: {last}")
    names = Counter(chip.name for chip in smi.chips)
    models = ", ".join(
        f"{name} x{count} ({compat.soc_family(name) or 'unknown family'})" for name, count in names.items()
    )
    hbm = "; ".join(
        f"NPU {chip.npu} chip {chip.chip}: {chip.memory_used}/{chip.memory_total} MB"
        for chip in smi.chips
        if chip.memory_total
    )
    saw = f"driver {smi.driver}; {len(smi.cards)} card(s), {len(smi.chips)} chip(s): {models}"
    saw += f"; memory in use: {hbm}"
    title = Text(
        f"{len(smi.chips)} NPU chip(s): {', '.join(names)}",
        f"{len(smi.chips)} 个 NPU 芯片：{', '.join(names)}",
    )
    return smi, ok("devices.npu-smi", title, saw)


def health(smi: NpuSmi) -> CheckResult:
    check = "devices.health"
    sick = [f"NPU {chip.npu} chip {chip.chip}: {chip.health}" for chip in smi.chips if chip.health != "OK"]
    if not sick:
        return ok(check, Text("Every chip reports Health OK", "所有芯片状态为 OK"))
    return CheckResult(
        check,
        Status.ERROR,
        Text("Chips not healthy: " + ", ".join(sick), "芯片状态异常：" + "，".join(sick)),
        "; ".join(sick),
        Text(
            "A job placed on such a chip fails at device open or mid-run.",
            "作业分配到这样的芯片会在打开设备或运行中失败。",
        ),
        Text(
            "Read `npu-smi info -t health -i <NPU>` for the alarm; keep the card out of the job "
            "(ASCEND_RT_VISIBLE_DEVICES) until it is repaired.",
            "用 `npu-smi info -t health -i <NPU>` 查看告警；修复前用 ASCEND_RT_VISIBLE_DEVICES "
            "把该卡排除在作业之外。",
        ),
    )


def busy(smi: NpuSmi) -> CheckResult:
    check = "devices.busy"
    if not smi.processes:
        return ok(check, Text("No process holds a card", "没有进程占用 NPU"))
    held = [
        f"NPU {p.npu} chip {p.chip}: pid {p.pid} ({p.name}, "
        f"{p.memory_mb if p.memory_mb is not None else '?'} MB)"
        for p in smi.processes
    ]
    pids = " ".join(str(p.pid) for p in smi.processes)
    return CheckResult(
        check,
        Status.WARNING,
        Text(
            "Cards held by running processes: "
            + ", ".join(f"pid {p.pid} on NPU {p.npu}" for p in smi.processes),
            "NPU 被进程占用：" + "，".join(f"NPU {p.npu} 上的 pid {p.pid}" for p in smi.processes),
        ),
        "; ".join(held),
        Text(
            "A job started on these cards shares their HBM and may fail to allocate or to open the device.",
            "在这些卡上启动的作业要与其共享 HBM，可能申请内存或打开设备失败。",
        ),
        Text(
            f"If it is a leftover of an earlier job, stop it (kill {pids}); else pick other cards with "
            "ASCEND_RT_VISIBLE_DEVICES.",
            f"若是之前作业的残留进程，请结束它（kill {pids}）；否则用 ASCEND_RT_VISIBLE_DEVICES 选择其他卡。",
        ),
    )


NO_NODES = CheckResult(
    "devices.dev-nodes",
    Status.ERROR,
    Text("No /dev/davinci device", "没有 /dev/davinci 设备"),
    "no /dev/davinci*",
    Text("Without the device nodes no process here can open an NPU.", "没有设备节点，本机进程无法打开 NPU。"),
    Text(
        "Load the NPU driver on the host; start containers with --device /dev/davinciN "
        "--device /dev/davinci_manager --device /dev/devmm_svm --device /dev/hisi_hdc.",
        "在宿主机加载 NPU 驱动；容器启动时加上 --device /dev/davinciN --device /dev/davinci_manager "
        "--device /dev/devmm_svm --device /dev/hisi_hdc。",
    ),
)
NODES_REFUSED = CheckResult(
    "devices.dev-nodes",
    Status.ERROR,
    NO_FIX,
    "",
    Text(
        "The runtime opens all of them; one it cannot open fails device init.",
        "运行时会打开所有这些节点；任何一个打不开都会导致设备初始化失败。",
    ),
    Text(
        "Run as a member of the driver's group (HwHiAiUser) or as the driver's install user; in a "
        "container, pass the missing nodes with --device.",
        "以驱动用户组（HwHiAiUser）成员或驱动安装用户运行；容器中用 --device 传入缺失的节点。",
    ),
)


def device_nodes(machine: Machine) -> CheckResult:
    """/dev/davinciN and the control nodes exist and this user may open them."""
    cards = sorted(glob.glob(machine.at("/dev/davinci[0-9]*")))
    if not cards:
        return NO_NODES
    control = [machine.at(f"/dev/{name}") for name in CONTROL_NODES]
    present = cards + [path for path in control if os.path.exists(path)]
    saw = ", ".join(os.path.basename(path) for path in present)
    missing = [os.path.basename(path) for path in control if not os.path.exists(path)]
    denied = [os.path.basename(path) for path in present if not os.access(path, os.R_OK | os.W_OK)]
    if not missing and not denied:
        count = len(cards)
        title = Text(f"{count} /dev/davinci device(s) accessible", f"{count} 个 /dev/davinci 设备可访问")
        return ok("devices.dev-nodes", title, saw)
    problems = [f"missing: {', '.join(missing)}"] if missing else []
    problems += [f"no read/write access: {', '.join(denied)}"] if denied else []
    problem = "; ".join(problems)
    return NODES_REFUSED._replace(
        title=Text("NPU device nodes: " + problem, "NPU 设备节点：" + problem), saw=saw
    )


def _existing(path: str) -> str:
    while path and not os.path.exists(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return path


def disk_space(machine: Machine) -> CheckResult:
    """Free space where CANN writes its logs and its compiled-kernel cache."""
    check = "devices.disk"
    env = machine.environ
    home = env.get("HOME", "/root")
    places = {
        "logs": env.get("ASCEND_PROCESS_LOG_PATH")
        or (
            os.path.join(env["ASCEND_WORK_PATH"], "log")
            if env.get("ASCEND_WORK_PATH")
            else os.path.join(home, "ascend", "log")
        ),
        "kernel cache": env.get("ACL_OP_COMPILER_CACHE_DIR")
        or env.get("ASCEND_CACHE_PATH")
        or os.path.join(home, "atc_data"),
    }
    seen, low = [], []
    for what, path in places.items():
        try:
            free = shutil.disk_usage(_existing(path)).free
        except OSError:
            continue
        seen.append(f"{what} {path}: {free / 1024**3:.1f} GiB free")
        if free < LOW_DISK:
            low.append(f"{what} ({path})")
    saw = "; ".join(seen) or "no place could be measured"
    if not low:
        return ok(
            check, Text("Enough free disk for logs and kernel caches", "日志和算子缓存所在磁盘空间充足"), saw
        )
    return CheckResult(
        check,
        Status.WARNING,
        Text("Less than 1 GiB free for " + ", ".join(low), "可用空间不足 1 GiB：" + "，".join(low)),
        saw,
        Text(
            "A full disk stops plog writing and kernel compilation mid-job.",
            "磁盘写满会使 plog 写入和算子编译在作业中途失败。",
        ),
        Text(
            "Free space there, or point ASCEND_PROCESS_LOG_PATH / ASCEND_CACHE_PATH at a larger disk.",
            "清理该处空间，或将 ASCEND_PROCESS_LOG_PATH / ASCEND_CACHE_PATH 指向更大的磁盘。",
        ),
    )
