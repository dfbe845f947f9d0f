"""MindSpore against the CANN and the Python it runs with, from its install page and the MindFormers
matrix (the bundled compatibility table)."""

from __future__ import annotations

from ascend_doctor.check.install import Toolkit
from ascend_doctor.check.machine import Interpreter
from ascend_doctor.check.result import CheckResult, Status, ok, skipped
from ascend_doctor.model import Text
from ascend_doctor.rulebase import compat
from ascend_doctor.rulebase.version_parse import fits, key, release, shown

CANN_CHECK = "versions.mindspore-cann"


def _series(version: str) -> tuple[int, ...]:
    return release(version)[:2]


def mindspore_cann(python: Interpreter | None, toolkit: Toolkit | None) -> CheckResult | None:
    """MindSpore's Ascend backend is built for one CANN release: another X.Y series is an error; a
    different release of the same series is a warning (the sources pair one CANN each, they do not
    say the rest of the series fails)."""
    if python is None:
        return None
    mindspore = python.packages.get("mindspore", ("", ""))[0]
    if not mindspore:
        why = Text("MindSpore is not installed in this interpreter", "该解释器中未安装 MindSpore")
        return skipped(CANN_CHECK, Text("MindSpore / CANN not checked", "未检查 MindSpore / CANN"), why)
    if toolkit is None:
        why = Text("No CANN toolkit was found", "未找到 CANN 工具包")
        return skipped(CANN_CHECK, Text("MindSpore / CANN not checked", "未检查 MindSpore / CANN"), why)
    saw = f"MindSpore {mindspore}, CANN {toolkit.version}"
    rows = compat.mindspore_rows(mindspore)
    names = list(dict.fromkeys(name for row in rows for name in row["cann"]))
    if not names:
        title = Text(
            f"MindSpore {mindspore} is not in the compatibility table",
            f"兼容性表中没有 MindSpore {mindspore}",
        )
        why = Text(
            "Its CANN cannot be checked; see the MindSpore install page for this release.",
            "无法核对其 CANN 版本；请查看该版本的 MindSpore 安装说明。",
        )
        return CheckResult(CANN_CHECK, Status.WARNING, title, saw, why)
    if any(fits(toolkit.version, name) for name in names):
        title = Text(
            f"MindSpore {mindspore} fits CANN {toolkit.version}",
            f"MindSpore {mindspore} 与 CANN {toolkit.version} 匹配",
        )
        return ok(CANN_CHECK, title, saw)
    same_series = any(_series(toolkit.version) == _series(name) for name in names)
    fitting = compat.mindspore_for_cann(toolkit.version)
    other = f" For CANN {toolkit.version}: MindSpore {', '.join(fitting)}." if fitting else ""
    other_zh = f"与 CANN {toolkit.version} 配套的 MindSpore：{', '.join(fitting)}。" if fitting else ""
    pin = f" (or keep CANN and pip install mindspore=={fitting[0]})" if fitting else ""
    pin_zh = f"（或保留 CANN，pip install mindspore=={fitting[0]}）" if fitting else ""
    return CheckResult(
        CANN_CHECK,
        Status.WARNING if same_series else Status.ERROR,
        Text(
            f"MindSpore {mindspore} does not fit CANN {toolkit.version}",
            f"MindSpore {mindspore} 与 CANN {toolkit.version} 不匹配",
        ),
        saw,
        Text(
            f"MindSpore {mindspore} is paired with CANN {', '.join(names)}.{other}",
            f"MindSpore {mindspore} 配套 CANN {', '.join(names)}。{other_zh}",
        ),
        Text(
            f"Install CANN {names[0]}{pin}.",
            f"安装 CANN {names[0]}{pin_zh}。",
        ),
    )


def mindspore_python(python: Interpreter | None) -> CheckResult | None:
    """The Python range MindSpore's install page gives for this release (None when it gives none)."""
    mindspore = python.packages.get("mindspore", ("", ""))[0] if python else ""
    if python is None or not mindspore:
        return None
    rows = compat.mindspore_rows(mindspore)
    supported = sorted({minor for row in rows for minor in row["python"]}, key=key)
    if not supported:
        return None
    check = "versions.python-mindspore"
    minor = shown(release(python.version)[:2])
    if minor in supported:
        return ok(
            check,
            Text(
                f"Python {minor} is supported by MindSpore {mindspore}",
                f"MindSpore {mindspore} 支持 Python {minor}",
            ),
        )
    return CheckResult(
        check,
        Status.WARNING,
        Text(
            f"Python {minor} is not listed for MindSpore {mindspore}",
            f"MindSpore {mindspore} 未列出 Python {minor}",
        ),
        f"Python {python.version}, MindSpore {mindspore}",
        Text(
            f"Its install page lists Python {', '.join(supported)}.",
            f"其安装说明列出的 Python 为 {', '.join(supported)}。",
        ),
        Text(
            f"Use a Python {supported[-1]} environment for this MindSpore.",
            f"为该 MindSpore 使用 Python {supported[-1]} 环境。",
        ),
    )
