"""Environment checks: what CANN's `set_env.sh` exports, the loader path, the devices a job may see,
HCCL and allocator settings, and the Python packages CANN itself imports."""

from __future__ import annotations

import os

from ascend_doctor.check.install import ASCEND, Toolkit
from ascend_doctor.check.machine import Interpreter, Machine, normal_name
from ascend_doctor.check.result import CheckResult, Status, ok, skipped
from ascend_doctor.model import EnvRemedy, Text
from ascend_doctor.rulebase import compat

NO_CANN = Text("no CANN toolkit was found", "未找到 CANN toolkit")
NOT_SOURCED = CheckResult(
    "env.cann-variables",
    Status.ERROR,
    Text("set_env.sh has not been sourced", "未执行 set_env.sh"),
    "ASCEND_HOME_PATH, ASCEND_TOOLKIT_HOME and ASCEND_OPP_PATH are unset",
    Text(
        "Without them torch_npu cannot find CANN: ops fail to load and kernels fail to compile.",
        "缺少这些变量时 torch_npu 找不到 CANN：算子无法加载，核函数无法编译。",
    ),
)


def set_env_script(toolkit: Toolkit) -> str:
    """`<root>/ascend-toolkit/set_env.sh` (<= 8.3) or `<root>/cann/set_env.sh` (>= 8.5)."""
    parent = os.path.dirname(toolkit.home)
    if toolkit.layout == "ascend-toolkit":
        return os.path.join(parent, "set_env.sh")
    return os.path.join(parent, "cann", "set_env.sh")


def _exports(toolkit: Toolkit) -> tuple[EnvRemedy, ...]:
    home = toolkit.home
    why = Text("what set_env.sh exports", "set_env.sh 导出的值")
    values = (
        ("ASCEND_TOOLKIT_HOME", home),
        ("ASCEND_HOME_PATH", home),
        ("ASCEND_OPP_PATH", os.path.join(home, "opp")),
        ("ASCEND_AICPU_PATH", home),
    )
    return tuple(EnvRemedy(name, value, why) for name, value in values)


def cann_variables(machine: Machine, toolkit: Toolkit | None) -> CheckResult:
    """torch_npu refuses to import when ASCEND_HOME_PATH, ASCEND_OPP_PATH or the runtime and compiler
    directories under the home are missing (its registry_manager check)."""
    check = "env.cann-variables"
    title = Text("CANN environment variables", "CANN 环境变量")
    if toolkit is None:
        return skipped(check, title, NO_CANN)
    env = machine.environ
    home = env.get("ASCEND_HOME_PATH") or env.get("ASCEND_TOOLKIT_HOME")
    script = set_env_script(toolkit)
    fix = Text(
        f"source {script} (in the job's shell, before python)",
        f"在作业的 shell 中先执行 source {script}，再启动 python",
    )
    if not home and not env.get("ASCEND_OPP_PATH"):
        return NOT_SOURCED._replace(fix=fix, env=_exports(toolkit))
    wanted = {
        "ASCEND_HOME_PATH": home or "",
        "ASCEND_OPP_PATH": env.get("ASCEND_OPP_PATH", ""),
        "$ASCEND_HOME_PATH/runtime": os.path.join(home, "runtime") if home else "",
        "$ASCEND_HOME_PATH/compiler": os.path.join(home, "compiler") if home else "",
    }
    missing = [
        f"{name}={path or '(unset)'}" for name, path in wanted.items() if not path or not os.path.isdir(path)
    ]
    saw = ", ".join(f"{name}={path}" for name, path in wanted.items() if not name.startswith("$"))
    if not missing:
        return ok(check, Text("CANN variables point at the toolkit", "CANN 变量指向有效的 toolkit"), saw)
    return CheckResult(
        check,
        Status.ERROR,
        Text("CANN variables point at missing directories", "CANN 变量指向不存在的目录"),
        saw,
        Text(
            "Missing: " + ", ".join(missing) + ". torch_npu checks these at import and refuses to start.",
            "缺失：" + "，".join(missing) + "。torch_npu 导入时会检查这些目录并拒绝启动。",
        ),
        fix,
        _exports(toolkit),
    )


def library_path(machine: Machine, toolkit: Toolkit | None) -> CheckResult:
    """The loader must find libascendcl.so (CANN lib64) and libascend_hal.so (driver lib64)."""
    check = "env.ld-library-path"
    title = Text("LD_LIBRARY_PATH", "LD_LIBRARY_PATH")
    if toolkit is None:
        return skipped(check, title, NO_CANN)
    entries = {os.path.normpath(p) for p in machine.environ.get("LD_LIBRARY_PATH", "").split(":") if p}
    driver = machine.at(f"{ASCEND}/driver/lib64")
    needed = [os.path.join(toolkit.home, "lib64")]
    if os.path.isdir(driver):
        needed += [driver, os.path.join(driver, "common"), os.path.join(driver, "driver")]
    absent = [path for path in needed if os.path.normpath(path) not in entries]
    saw = f"LD_LIBRARY_PATH={machine.environ.get('LD_LIBRARY_PATH', '(unset)')}"
    if not absent:
        return ok(
            check, Text("CANN and driver libraries are on the loader path", "CANN 与驱动库在加载路径中"), saw
        )
    value = ":".join(absent) + ":${LD_LIBRARY_PATH}"
    why = Text(
        "libascendcl.so, libhccl.so and libascend_hal.so are loaded from here",
        "libascendcl.so、libhccl.so、libascend_hal.so 从这些目录加载",
    )
    return CheckResult(
        check,
        Status.ERROR,
        Text("CANN or driver lib64 is not on LD_LIBRARY_PATH", "LD_LIBRARY_PATH 中缺少 CANN 或驱动的 lib64"),
        saw,
        Text(
            "Not on the path: " + ", ".join(absent) + ". Importing torch_npu then fails with "
            "'libascendcl.so: cannot open shared object file' or 'libascend_hal.so' not found.",
            "路径中缺少："
            + "，".join(absent)
            + "。导入 torch_npu 时会报 “libascendcl.so: cannot open shared object file”"
            + " 或找不到 libascend_hal.so。",
        ),
        Text(f"source {set_env_script(toolkit)}", f"执行 source {set_env_script(toolkit)}"),
        (EnvRemedy("LD_LIBRARY_PATH", value, why),),
    )


def python_dependencies(python: Interpreter | None, toolkit: Toolkit | None) -> CheckResult:
    """The packages CANN's install guide lists: its op compiler and TBE import them at first compile."""
    check = "env.cann-python-deps"
    title = Text("CANN's Python dependencies", "CANN 的 Python 依赖")
    if toolkit is None:
        return skipped(check, title, NO_CANN)
    if python is None:
        return skipped(check, title, Text("the target Python could not be asked", "无法查询目标 Python"))
    row = compat.python_deps(toolkit.version)
    if row is None:
        return skipped(
            check, title, Text("no install guide row in the table", "兼容性表中没有对应的安装指南")
        )
    wanted = list(row["packages"])
    missing = [name for name in wanted if normal_name(name) not in python.packages]
    guide = f"CANN {row['cann']}" if row["cann"] else "CANN"
    saw = f"{guide} install guide lists {', '.join(wanted)}; {python.executable}"
    if not missing:
        return ok(check, Text("CANN's Python dependencies are installed", "CANN 的 Python 依赖已安装"), saw)
    return CheckResult(
        check,
        Status.ERROR,
        Text(
            "Missing Python packages CANN needs: " + ", ".join(missing),
            "缺少 CANN 需要的 Python 包：" + "，".join(missing),
        ),
        saw,
        Text(
            "CANN's op compiler imports them at the first operator compile; a missing one fails the job "
            "there (e.g. `No module named 'decorator'`).",
            "CANN 的算子编译器在首次编译算子时导入它们；缺少任何一个都会让作业失败（例如 `No module named "
            "'decorator'`）。",
        ),
        Text(
            f"{python.executable} -m pip install {' '.join(missing)}",
            f"{python.executable} -m pip install {' '.join(missing)}",
        ),
    )
