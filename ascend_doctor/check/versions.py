"""Version checks: Python, the Python packages, CANN, driver and firmware, each pair against the
bundled compatibility table, with the versions that would fit."""

from __future__ import annotations

from ascend_doctor.check.install import Toolkit
from ascend_doctor.check.machine import Interpreter
from ascend_doctor.check.result import CheckResult, Status, ok, skipped
from ascend_doctor.model import Text
from ascend_doctor.rulebase import compat
from ascend_doctor.rulebase.version_parse import fits, key, release, shown

# Shown when present, in this order; torch, torch_npu and numpy are always named.
PACKAGES = (
    "torch",
    "torch-npu",
    "numpy",
    "mindspore",
    "vllm",
    "vllm-ascend",
    "deepspeed",
    "transformers",
    "mindspeed",
)
ALWAYS = ("torch", "torch-npu", "numpy")
SHOWN = 8  # versions that would fit, at most


def few(versions: list[str]) -> str:
    more = len(versions) - SHOWN
    return ", ".join(versions[:SHOWN]) + (f" and {more} more" if more > 0 else "")


def python_result(python: Interpreter) -> CheckResult:
    saw = f"Python {python.version} ({python.executable}, {python.machine})"
    return ok("versions.python", Text(f"Python {python.version}", f"Python {python.version}"), saw)


def packages_result(python: Interpreter) -> CheckResult:
    shown_names = [name for name in PACKAGES if name in python.packages or name in ALWAYS]
    saw = ", ".join(
        f"{name.replace('-', '_') if name == 'torch-npu' else name} "
        f"{python.packages[name][0] if name in python.packages else '(not installed)'}"
        for name in shown_names
    )
    return ok("versions.packages", Text(saw, saw), f"{saw} (metadata on {python.executable}'s path)")


def _torch_mismatch(torch: str, npu: str, rows: list[dict[str, str]]) -> CheckResult:
    wanted = sorted({row["torch"] for row in rows}, key=key)
    fitting = compat.torch_npu_for_torch(torch)
    base = shown(release(torch)[:3])
    other = (
        f" For torch {base}: torch_npu {few(fitting)}."
        if fitting
        else f" No torch_npu is published for torch {base}."
    )
    other_zh = (
        f"与 torch {base} 匹配的 torch_npu：{few(fitting)}。"
        if fitting
        else f"没有为 torch {base} 发布的 torch_npu。"
    )
    return CheckResult(
        "versions.torch-torch_npu",
        Status.ERROR,
        Text(f"torch {torch} does not fit torch_npu {npu}", f"torch {torch} 与 torch_npu {npu} 不匹配"),
        f"torch {torch}, torch_npu {npu}",
        Text(
            f"torch_npu {npu} is built for torch {' or '.join(wanted)}; importing it with another torch "
            "fails "
            f"(undefined symbol) or misbehaves.{other}",
            f"torch_npu {npu} 只适配 torch {' 或 '.join(wanted)}；与其他版本的 torch 一起导入会失败"
            f"（undefined symbol）或行为异常。{other_zh}",
        ),
        _pin_torch(rows, fitting),
    )


def torch_pair(python: Interpreter) -> CheckResult:
    """torch_npu X.Y.Z.* is built against torch X.Y.Z and nothing else."""
    check = "versions.torch-torch_npu"
    torch = python.packages.get("torch", ("", ""))[0]
    npu = python.packages.get("torch-npu", ("", ""))[0]
    saw = f"torch {torch or '(not installed)'}, torch_npu {npu}"
    if not npu:
        why = Text("torch_npu is not installed in this interpreter", "该解释器中未安装 torch_npu")
        return skipped(check, Text("torch / torch_npu not checked", "未检查 torch / torch_npu"), why)
    rows = compat.torch_npu_rows(npu)
    if not torch:
        title = Text(f"torch_npu {npu} without torch", f"安装了 torch_npu {npu} 但没有 torch")
        why = Text(
            "torch_npu extends torch and cannot be imported without it.",
            "torch_npu 是 torch 的扩展，没有 torch 无法导入。",
        )
        return CheckResult(check, Status.ERROR, title, saw, why, _pin_torch(rows))
    if not rows:
        title = Text(f"torch_npu {npu} is not in the compatibility table", f"兼容性表中没有 torch_npu {npu}")
        why = Text(
            "Its torch cannot be checked; torch_npu X.Y.Z is normally built for torch X.Y.Z.",
            "无法核对其 torch 版本；torch_npu X.Y.Z 通常对应 torch X.Y.Z。",
        )
        return CheckResult(check, Status.WARNING, title, saw, why)
    if any(release(torch)[:3] == release(row["torch"])[:3] for row in rows):
        return ok(
            check, Text(f"torch {torch} fits torch_npu {npu}", f"torch {torch} 与 torch_npu {npu} 匹配"), saw
        )
    return _torch_mismatch(torch, npu, rows)


def _pin_torch(rows: list[dict[str, str]], fitting: list[str] | None = None) -> Text:
    torch = sorted({row["torch"] for row in rows}, key=key)
    pin = f"pip install torch=={torch[-1]}" if torch else "pip install torch"
    alt = f" (or keep torch and install torch_npu=={fitting[0]})" if fitting else ""
    alt_zh = f"（或保留 torch，改装 torch_npu=={fitting[0]}）" if fitting else ""
    return Text(f"{pin}{alt}; install the CPU build of torch.", f"{pin}{alt_zh}；安装 CPU 版本的 torch。")


def torch_npu_python(python: Interpreter) -> CheckResult | None:
    npu = python.packages.get("torch-npu", ("", ""))[0]
    rows = compat.torch_npu_rows(npu) if npu else []
    supported = sorted({minor for row in rows for minor in row["python"]}, key=key)
    if not supported:
        return None
    minor = shown(release(python.version)[:2])
    check = "versions.python-torch_npu"
    if minor in supported:
        return ok(
            check,
            Text(f"Python {minor} is supported by torch_npu {npu}", f"torch_npu {npu} 支持 Python {minor}"),
        )
    return CheckResult(
        check,
        Status.WARNING,
        Text(f"Python {minor} is not listed for torch_npu {npu}", f"torch_npu {npu} 未列出 Python {minor}"),
        f"Python {python.version}, torch_npu {npu}",
        Text(
            f"The published wheels are for Python {', '.join(supported)}.",
            f"官方发布的 wheel 支持 Python {', '.join(supported)}。",
        ),
        Text(
            f"Use a Python {supported[-1]} environment for this torch_npu.",
            f"为该 torch_npu 使用 Python {supported[-1]} 环境。",
        ),
    )


def torch_npu_cann(python: Interpreter | None, toolkit: Toolkit | None) -> CheckResult | None:
    npu = python.packages.get("torch-npu", ("", ""))[0] if python else ""
    if not npu or toolkit is None:
        return None
    rows = compat.torch_npu_rows(npu)
    names, stated = compat.cann_for_torch_npu(rows)
    if not names:
        return None
    check = "versions.torch_npu-cann"
    saw = f"torch_npu {npu}, CANN {toolkit.version}"
    if any(fits(toolkit.version, name) for name in names):
        return ok(
            check,
            Text(
                f"torch_npu {npu} fits CANN {toolkit.version}",
                f"torch_npu {npu} 与 CANN {toolkit.version} 匹配",
            ),
            saw,
        )
    status = Status.ERROR if stated else Status.WARNING
    said = "is stated to work with" if stated else "was released with"
    said_zh = "声明兼容" if stated else "发布时配套"
    return CheckResult(
        check,
        status,
        Text(
            f"torch_npu {npu} does not fit CANN {toolkit.version}",
            f"torch_npu {npu} 与 CANN {toolkit.version} 不匹配",
        ),
        saw,
        Text(
            f"torch_npu {npu} {said} CANN {', '.join(names)}.",
            f"torch_npu {npu} {said_zh} CANN {', '.join(names)}。",
        ),
        Text(
            "Install the torch_npu built for this CANN, or the CANN its release notes name.",
            "安装与该 CANN 配套的 torch_npu，或安装其发布说明中列出的 CANN。",
        ),
    )


VLLM_STACK = Text(
    "vllm-ascend is built against one vLLM, torch and torch_npu; installing vLLM or torch afterwards often "
    "replaces them.",
    "vllm-ascend 针对特定的 vLLM、torch 和 torch_npu 构建；之后再安装 vLLM 或 torch 常会把它们替换掉。",
)


def _vllm_mismatch(version: str, wrong: list[str], wants: dict[str, str], saw: str) -> CheckResult:
    pins = " ".join(
        f"{name.replace('-', '_')}=={want.split('/')[0].lstrip('v')}" for name, want in wants.items()
    )
    return CheckResult(
        "versions.vllm-ascend",
        Status.ERROR,
        Text(
            f"vllm-ascend {version} does not fit: " + ", ".join(wrong),
            f"vllm-ascend {version} 与依赖不匹配：" + "，".join(wrong),
        ),
        saw,
        VLLM_STACK,
        Text(
            f"pip install {pins} (then reinstall vllm-ascend {version})",
            f"pip install {pins}（然后重新安装 vllm-ascend {version}）",
        ),
    )


def vllm_ascend_result(python: Interpreter, toolkit: Toolkit | None) -> CheckResult | None:
    """vllm-ascend pins vLLM, torch and torch_npu, and names the CANN it is tested with."""
    version = python.packages.get("vllm-ascend", ("", ""))[0]
    if not version:
        return None
    check = "versions.vllm-ascend"
    row = compat.vllm_ascend_row(version)
    if row is None:
        why = Text(
            f"vllm-ascend {version} is not in the compatibility table.",
            f"兼容性表中没有 vllm-ascend {version}。",
        )
        return skipped(check, Text("vllm-ascend not checked", "未检查 vllm-ascend"), why)
    wants = {"vllm": row["vllm"], "torch": row["torch"], "torch-npu": row["torch_npu"]}
    have = {name: python.packages.get(name, ("(not installed)", ""))[0] for name in wants}
    saw = f"vllm-ascend {version}: " + ", ".join(f"{name.replace('-', '_')} {have[name]}" for name in wants)
    wrong = [
        f"{name.replace('-', '_')} {have[name]} (wants {want})"
        for name, want in wants.items()
        if not any(release(have[name])[:3] == release(one)[:3] for one in want.split("/"))
    ]
    if wrong:
        return _vllm_mismatch(version, wrong, wants, saw)
    if toolkit is not None and not fits(toolkit.version, row["cann"]):
        title = Text(
            f"vllm-ascend {version} is tested with CANN {row['cann']}, not {toolkit.version}",
            f"vllm-ascend {version} 的测试环境是 CANN {row['cann']}，而不是 {toolkit.version}",
        )
        why = Text("Its custom ops are built for that CANN.", "其自定义算子是针对该 CANN 构建的。")
        return CheckResult(check, Status.WARNING, title, f"{saw}; CANN {toolkit.version}", why)
    return ok(check, Text(f"vllm-ascend {version} fits its stack", f"vllm-ascend {version} 与依赖匹配"), saw)
