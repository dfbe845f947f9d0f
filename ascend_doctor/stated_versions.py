"""Versions a log states that do not fit together, as findings: no single line shows them.

Issue reports paste their environment at the top (`pip list`, `torch_npu version: ...`, the
`npu-smi info` header, `CANN 8.0.RC2`, the toolkit's `version.cfg` or
`ascend_toolkit_install.info`). Two of those lines, compared, can be the whole answer: a
torch_npu wheel is built for the torch release of the same X.Y.Z, and a driver a year older than
the one a CANN release ships with does not run it. Only an input's first bytes are read (the
scanner keeps them), and only these two pairs are judged: where the compatibility table lists
drivers for a CANN release, a driver whose year and release (`23.0`) is below all of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from ascend_doctor.model import Confidence, Evidence, Examples, Kind, Match, Rule, Severity, Text
from ascend_doctor.regexes import regex

_NAMED = r"(?:[ \t]+version)?[ \t]*"  # `torch version: 2.1.0`, `torch==2.1.0`, `torch   2.1.0` (pip list)
_TORCH = (
    rf"(?im)^[ \t>*|-]*(?:torch|pytorch){_NAMED}(?:==|:|=|[ \t])[ \t]*v?(\d+\.\d+\.\d+)[\w.+]*[ \t|]*$"
    rf"|(?i:\b(?:torch|pytorch){_NAMED}(?:==|:|=)[ \t]*v?(\d+\.\d+\.\d+))"
)
_TORCH_NPU = rf"(?i)\btorch[-_]npu{_NAMED}(?:==|:|=|[ \t])[ \t]*v?(\d+\.\d+\.\d+[\w.+]*)"
_CANN_RELEASE = r"(\d{1,2}\.\d\.(?:RC\d+|\d+)(?:\.alpha\d+|\.beta\d+)?)"
_CANN = (
    r"(?im)\b(?:CANN|ascend[-_ ]?toolkit|cann[-_]toolkit)(?:[ \t]+version)?[ \t]*[:=/_ ][ \t]*v?"
    + _CANN_RELEASE
    # the toolkit's version.cfg pairs a component's inner build with the release
    + r"|^[ \t]*(?:runtime|compiler|toolkit)_running_version=\[[\w.]+:"
    + _CANN_RELEASE
    # ascend_toolkit_install.info, which vllm-ascend's issue template and collect_env print
    + r"|\bpackage_name=Ascend-cann-toolkit[ \t]*\r?\n[ \t]*version=v?"
    + _CANN_RELEASE
)
_DRIVER = (
    r"(?i)(?:npu-smi[ \t]+\S+[ \t]+Version:[ \t]*|\bdriver(?:[ \t]+version)?[ \t]*[:=][ \t]*"
    r"|驱动(?:版本)?[ \t]*[:：][ \t]*\**[ \t]*)v?(\d{2}\.\d\.(?:rc\d+(?:\.\w+)?|\d+(?:\.\d+)?))"
)

_BASE = Rule(
    id="versions.stated-torch-npu-pair",
    category="version_mismatch",
    severity=Severity.ERROR,
    confidence=Confidence.MEDIUM,
    kind=Kind.CAUSE,
    title=Text(
        "The versions of torch and torch_npu this log states do not match",
        "日志中给出的 torch 与 torch_npu 版本不匹配",
    ),
    cause=Text(
        "Each torch_npu wheel is built against one torch release, the one with the same X.Y.Z "
        "(torch_npu 2.1.0.post3 for torch 2.1.0). The two versions this log states differ, so torch_npu's "
        "compiled library meets a torch it was not built for: undefined symbols at import, missing "
        "attributes, or failures that look unrelated.",
        "每个 torch_npu wheel 都是针对某一个 torch 版本编译的，即版本号 X.Y.Z 相同的那个（torch_npu "
        "2.1.0.post3 对应 torch 2.1.0）。本日志给出的两个版本不同，torch_npu 的编译库遇到了并非为其编译的 "
        "torch：导入时出现未定义符号、缺少属性，或看似无关的失败。",
    ),
    fix=Text(
        "Install the torch release that matches torch_npu (`pip install torch==<X.Y.Z of torch_npu>`), or "
        'the torch_npu made for your torch; then check with `python -c "import torch, torch_npu; '
        'print(torch.__version__, torch_npu.__version__)"`.',
        "安装与 torch_npu 匹配的 torch（`pip install torch==<torch_npu 的 X.Y.Z>`），或安装为当前 torch "
        '编译的 torch_npu；再用 `python -c "import torch, torch_npu; print(torch.__version__, '
        'torch_npu.__version__)"` 确认。',
    ),
    env=(),
    patterns=(),
    examples=Examples((), ()),
    sources=("built in: torch and torch_npu versions stated in a log's first lines",),
)
TORCH_PAIR = _BASE
DRIVER_OLDER = _BASE._replace(
    id="versions.stated-driver-older-than-cann",
    title=Text(
        "The NPU driver this log states is older than the CANN release it states needs",
        "日志中给出的 NPU 驱动版本低于其给出的 CANN 版本所需",
    ),
    cause=Text(
        "Each CANN release is published with the driver and firmware (HDK) releases it runs on. The driver "
        "this log states is from an older release than any of them, so the runtime fails in ways that name "
        "no version: devices that cannot be opened or set, features missing, kernels that fail to launch.",
        "每个 CANN 版本都与其可运行的驱动和固件（HDK）版本一同发布。本日志给出的驱动比其中任何一个都旧，"
        "因此运行时会以不提版本的方式失败：设备无法打开或设置、功能缺失、内核无法下发。",
    ),
    fix=Text(
        "Upgrade the driver and firmware to a release listed for this CANN in its release notes (install "
        "firmware, then driver, and reboot), or use the CANN release made for the installed driver; "
        "`npu-smi info` shows the driver version.",
        "把驱动和固件升级到该 CANN 发布说明中列出的版本（先装固件、再装驱动，然后重启），或改用为已安装驱动"
        "发布的 CANN 版本；`npu-smi info` 可查看驱动版本。",
    ),
    sources=(
        "built in: CANN and driver versions stated in a log's first lines, and the compatibility table",
    ),
)
RULES = (TORCH_PAIR, DRIVER_OLDER)


class _Stated(NamedTuple):
    version: str
    offset: int  # where in the text it is stated


def _first(source: str, text: str) -> _Stated | None:
    """Where `source` first states a version in `text`. The patterns are compiled on first use
    (and kept): a log that states no torch_npu never pays for the torch one."""
    pattern = regex(source)
    found = pattern.search(text)
    if found is None:
        return None
    group = next(index for index in range(1, pattern.groups + 1) if found.group(index))
    return _Stated(found.group(group).rstrip("."), found.start(group))


def mismatches(head: bytes, label: str, index: int, rank: int | None) -> list[Match]:
    """The findings' lines: for each pair that does not fit, both lines that state it."""
    if not head:
        return []
    text = head.decode("utf-8", "replace")
    torch_npu = _first(_TORCH_NPU, text)
    torch = _first(_TORCH, text) if torch_npu else None
    cann = _first(_CANN, text)
    driver = _first(_DRIVER, text) if cann else None
    found: list[Match] = []
    if torch and torch_npu and _release(torch.version)[:3] != _release(torch_npu.version)[:3]:
        found.extend(_lines(TORCH_PAIR, text, (torch, torch_npu), label, index, rank))
    if cann and driver and _older(driver.version, cann.version):
        found.extend(_lines(DRIVER_OLDER, text, (cann, driver), label, index, rank))
    return found


def _older(driver: str, cann: str) -> bool:
    """Whether the driver's year and release (`23.0`) is below every driver listed for this CANN."""
    from ascend_doctor.rulebase import compat  # the table is read only for a log that states both

    fit = compat.driver_fit(cann, driver)
    if fit is None or fit.matched:
        return False
    listed = [_release(version)[:2] for version in fit.known if len(_release(version)) >= 2]
    return bool(listed) and _release(driver)[:2] < min(listed)


def _release(version: str) -> tuple[int, ...]:
    from ascend_doctor.rulebase.version_parse import release  # only for a log that states a pair

    return release(version)


def _lines(
    rule: Rule, text: str, stated: tuple[_Stated, ...], label: str, index: int, rank: int | None
) -> Iterator[Match]:
    captures = tuple((name, one.version) for name, one in zip(("first", "second"), stated))
    for one in sorted(stated, key=lambda each: each.offset):
        start = text.rfind("\n", 0, one.offset) + 1
        end = text.find("\n", one.offset)
        line = text[start : end if end >= 0 else len(text)].strip()
        evidence = Evidence(label, text.count("\n", 0, one.offset) + 1, line, rank, None, captures)
        yield Match(rule.id, 0, evidence, index)
