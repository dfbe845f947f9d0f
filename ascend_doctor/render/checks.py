"""`ascend-doctor check` reports in the formats of findings: text, json, markdown, github. A failing
check prints like a finding (title, what was seen, why, fix, `export` lines); the `--deep` probe's
findings are the diagnose engine's and are printed by the renderer of the same format."""

from __future__ import annotations

import json
import re
import shlex
from typing import Any, TextIO

from ascend_doctor.check.result import CheckReport, CheckResult, Status
from ascend_doctor.model import EnvRemedy
from ascend_doctor.render import RENDERERS
from ascend_doctor.render.base import printable
from ascend_doctor.render.github import command, commands_stopped
from ascend_doctor.render.markdown import inline, prose

SCHEMA_VERSION = 1
MARKS = {Status.OK: "✓", Status.WARNING: "!", Status.ERROR: "✗", Status.SKIPPED: "-"}
STYLES = {Status.OK: "green", Status.WARNING: "yellow", Status.ERROR: "bold red", Status.SKIPPED: "dim"}
WORDS = {
    "en": {
        "check": "Check",
        "none": "No Ascend software or device found on this machine (no CANN toolkit, NPU driver, npu-smi or "
        "/dev/davinci); install:",
        "failed": "{errors} error(s), {warnings} warning(s): {title}",
        "warned": "no error, {warnings} warning(s): {title}",
        "passed": "all {count} checks passed",
        "saw": "saw",
        "why": "why",
        "fix": "Fix",
        "env": "Env",
        "probe": "What the --deep probe printed, diagnosed:",
        "footer": "ascend-doctor {version}: {count} checks: {ok} ok, {warning} warning, {error} error, "
        "{skipped} skipped",
    },
    "zh": {
        "check": "检查",
        "none": "本机未发现昇腾软件或设备（没有 CANN toolkit、NPU 驱动、npu-smi 或 /dev/davinci）；请安装：",
        "failed": "{errors} 个错误，{warnings} 个警告：{title}",
        "warned": "没有错误，{warnings} 个警告：{title}",
        "passed": "全部 {count} 项检查通过",
        "saw": "所见",
        "why": "原因",
        "fix": "修复",
        "env": "环境变量",
        "probe": "--deep 探测输出的诊断：",
        "ok": "通过",
        "warning": "警告",
        "error": "错误",
        "skipped": "跳过",
        "footer": "ascend-doctor {version}：{count} 项检查：{ok} 通过，{warning} 警告，{error} 错误，"
        "{skipped} 跳过",
    },
}


def words(report: CheckReport) -> dict[str, str]:
    return WORDS.get(report.lang, WORDS["en"])


def status_word(status: Status, said: dict[str, str]) -> str:
    """`error`, or its translation; json keeps the English value."""
    return said.get(status.value, status.value)


def verdict(report: CheckReport) -> str:
    """One line: nothing found, the first error, the first warning, or all passed."""
    said = words(report)
    if not report.ascend_found:
        return said["none"]
    errors, warnings = report.count(Status.ERROR), report.count(Status.WARNING)
    first = next((r for s in (Status.ERROR, Status.WARNING) for r in report.results if r.status is s), None)
    if first is None:
        return said["passed"].format(count=len(report.results))
    title = first.title.get(report.lang)
    return said["failed" if errors else "warned"].format(errors=errors, warnings=warnings, title=title)


def export_line(remedy: EnvRemedy) -> str:
    """`export NAME=value`; double-quoted when the value extends a variable (`...:${LD_LIBRARY_PATH}`)."""
    if "${" in remedy.value:
        escaped = re.sub(r'(["`\\])', r"\\\1", remedy.value)
        return f'export {remedy.name}="{escaped}"'
    return f"export {remedy.name}={shlex.quote(remedy.value)}"


def advice(result: CheckResult, report: CheckReport) -> list[tuple[str, str]]:
    """(label, text) lines under a check that is not ok: saw, why, fix, exports."""
    said, lang = words(report), report.lang
    lines = [(said["saw"], result.saw)] if result.saw else []
    lines += [
        (label, text.get(lang))
        for label, text in ((said["why"], result.why), (said["fix"], result.fix))
        if text.get(lang)
    ]
    lines += [(said["env"], f"{export_line(env)}   # {env.why.get(lang)}") for env in result.env]
    return lines


class CheckTextRenderer:
    name = "text"

    def __init__(self, color: bool = False) -> None:
        self.color = color

    def render(self, report: CheckReport, stream: TextIO) -> None:
        lines = self.lines(report)
        if self.color:
            from ascend_doctor.render.text import _print_styled

            _print_styled(lines, stream, 0)
        else:
            stream.write("".join("".join(text for text, _style in line) + "\n" for line in lines))
        if report.probe is not None and report.probe.findings:
            stream.write(f"\n{words(report)['probe']}\n")
            RENDERERS["text"](color=self.color).render(report.probe, stream)

    def lines(self, report: CheckReport) -> list[list[tuple[str, str]]]:
        said = words(report)
        failed = report.failed
        lines = [
            [
                (f"{said['check']}: ", "bold"),
                (printable(verdict(report)), "bold red" if failed else "bold green"),
            ]
        ]
        lines += [
            [(f"  {index}. ", "bold"), (hint.get(report.lang), "")]
            for index, hint in enumerate(report.hints, 1)
        ]
        lines.append([])
        width = max(len(result.id) for result in report.results)
        for result in report.results:
            title = result.title.get(report.lang)
            if result.status is Status.SKIPPED and result.why.get(report.lang):
                title += f" ({result.why.get(report.lang)})"
            lines.append(
                [
                    (f"{MARKS[result.status]} {status_word(result.status, said):<8} ", STYLES[result.status]),
                    (f"{result.id:<{width}}  ", "cyan"),
                    (printable(title), "bold" if result.status in (Status.ERROR, Status.WARNING) else ""),
                ]
            )
            if result.status in (Status.ERROR, Status.WARNING):
                lines += [
                    [(f"    {label}: ", "bold"), (printable(text), "")]
                    for label, text in advice(result, report)
                ]
        counts = {status.value: report.count(status) for status in Status}
        footer = said["footer"].format(version=report.tool_version, count=len(report.results), **counts)
        return [*lines, [], [(footer, "dim")]]


def result_dict(result: CheckResult, lang: str) -> dict[str, Any]:
    return {
        "id": result.id,
        "status": result.status.value,
        "title": result.title.get(lang),
        "saw": result.saw,
        "why": result.why.get(lang),
        "fix": result.fix.get(lang),
        "env": [{"name": e.name, "value": e.value, "why": e.why.get(lang)} for e in result.env],
    }


class CheckJsonRenderer:
    name = "json"

    def render(self, report: CheckReport, stream: TextIO) -> None:
        probe = None
        if report.probe is not None:
            from io import StringIO

            buffer = StringIO()
            RENDERERS["json"]().render(report.probe, buffer)
            probe = json.loads(buffer.getvalue())
        document = {
            "schema_version": SCHEMA_VERSION,
            "tool": {"name": "ascend-doctor", "version": report.tool_version},
            "verdict": verdict(report),
            "ascend_found": report.ascend_found,
            "hints": [hint.get(report.lang) for hint in report.hints],
            "counts": {status.value: report.count(status) for status in Status},
            "checks": [result_dict(result, report.lang) for result in report.results],
            "probe": probe,
        }
        json.dump(document, stream, ensure_ascii=False, indent=2)
        stream.write("\n")


class CheckMarkdownRenderer:
    name = "markdown"

    def render(self, report: CheckReport, stream: TextIO) -> None:
        said = words(report)
        out = [f"## ascend-doctor check\n\n**{inline(verdict(report))}**\n"]
        out += [f"{index}. {prose(hint.get(report.lang))}" for index, hint in enumerate(report.hints, 1)]
        out += ["", "| status | check | result |", "| --- | --- | --- |"]
        for result in report.results:
            mark = f"{MARKS[result.status]} {result.status.value}"
            out.append(f"| {mark} | `{result.id}` | {inline(result.title.get(report.lang))} |")
        for result in report.results:
            if result.status not in (Status.ERROR, Status.WARNING):
                continue
            out += [
                "",
                f"### {MARKS[result.status]} {inline(result.title.get(report.lang))} (`{result.id}`)",
                "",
            ]
            for label, text in advice(result, report):
                body = f"`{text}`" if label == said["env"] and "`" not in text else prose(text)
                out.append(f"- **{label}:** {body}")
        stream.write("\n".join(out) + "\n")
        if report.probe is not None and report.probe.findings:
            stream.write(f"\n### {inline(said['probe'])}\n\n")
            RENDERERS["markdown"]().render(report.probe, stream)


class CheckGithubRenderer:
    """One annotation per error or warning; a notice with the verdict when there is none."""

    name = "github"

    def render(self, report: CheckReport, stream: TextIO) -> None:
        lines = []
        kinds = {Status.ERROR: "error", Status.WARNING: "warning"}
        for result in report.results:
            if result.status in kinds:
                body = "\n".join(f"{label}: {text}" for label, text in advice(result, report))
                message = f"{result.title.get(report.lang)}\n{body}"
                lines.append(
                    command(kinds[result.status], message, {"title": f"ascend-doctor check: {result.id}"})
                )
        if not report.ascend_found:
            hints = "\n".join(hint.get(report.lang) for hint in report.hints)
            lines.insert(0, command("error", f"{verdict(report)}\n{hints}", {"title": "ascend-doctor check"}))
        elif not lines:
            lines.append(command("notice", verdict(report), {"title": "ascend-doctor check"}))
        stream.write("".join(f"{line}\n" for line in lines))
        if report.probe is not None and report.probe.findings:
            with commands_stopped(stream):
                stream.write(f"{words(report)['probe']}\n")
            RENDERERS["github"]().render(report.probe, stream)


CHECK_RENDERERS = {
    "text": CheckTextRenderer,
    "json": CheckJsonRenderer,
    "markdown": CheckMarkdownRenderer,
    "github": CheckGithubRenderer,
}
