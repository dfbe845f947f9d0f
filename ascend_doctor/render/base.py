"""What every renderer shares: the interface and the one-line verdict."""

from __future__ import annotations

from typing import Protocol, TextIO

from ascend_doctor import uncaught
from ascend_doctor.model import NOT_A_FAILURE, Evidence, Finding, Report, Severity
from ascend_doctor.read.events import rank_of_path
from ascend_doctor.regexes import regex

_CONTROL = regex(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")

# The words of the text report; the CI formats label their lines with the same ones.
LABELS = {
    "en": {
        "diagnosis": "Diagnosis",
        "cause": "Cause",
        "fix": "Fix",
        "env": "Env",
        "evidence": "Evidence",
        "consequence": "consequence of",
        "symptom": "symptom of",
        "seen": "seen {count}×",
        "files": "in {count} files",
        "also": "also matched: {ids}",
        "more": "… and {count} more line(s)",
        "footer": "ascend-doctor {version}: read {inputs} input(s), {lines:,} lines, {rules} rules",
        "skipped": "; skipped {count} (listed on stderr)",
        "confidence": "confidence {value:.2f}",
        "category": "category",
        "error": "error",
        "warning": "warning",
        "info": "info",
        "stdin_line": "stdin, line {line}",
        "earlier_run": "earlier run, {days} day{s} before",
        "colon": ": ",
    },
    "zh": {
        "diagnosis": "诊断",
        "cause": "原因",
        "fix": "修复",
        "env": "环境变量",
        "evidence": "证据",
        "consequence": "由此引起：",
        "symptom": "症状，源自",
        "seen": "出现 {count} 次",
        "files": "分布在 {count} 个文件",
        "also": "同时匹配：{ids}",
        "more": "…… 另有 {count} 行",
        "footer": "ascend-doctor {version}：读取 {inputs} 个输入，{lines:,} 行，{rules} 条规则",
        "skipped": "；跳过 {count} 个（见 stderr）",
        "confidence": "置信度 {value:.2f}",
        "category": "类别",
        "error": "错误",
        "warning": "警告",
        "info": "提示",
        "stdin_line": "标准输入第 {line} 行",
        "earlier_run": "更早的一次运行，{days} 天前",
        "colon": "：",
    },
}
MESSAGES = {
    "en": {
        "nothing": "No known Ascend failure cause found.",
        "not_ascend": "This is not an Ascend failure: {title}.",
        "no_failure": "No failure: {title}.",
        "no_error": "No known Ascend failure cause found; worth a look: {title} ({where}).",
        "died": "No Ascend cause found; the job died of {exception}{raised_at}",
        "died_npu": (
            "The job died of an NPU error whose cause the log does not show: {exception}{raised_at}; "
            "diagnose its plog too"
        ),
        "raised_at": " at {frame}",
        "cut_at": " (last frame {frame})",
        "cut": (
            "The log ends inside a traceback{raised_at}, before the line that names the exception: "
            "get the whole output and diagnose it again"
        ),
        "started": "started on {origin}; {count} other {unit} timed out waiting for it",
        "ranks": "ranks",
        "files": "files",
        "rank": "rank",
        "file": "file",
        "rank_at": "rank {rank} ({path}:{line})",
        "rank_on_node": "node {node}, rank {rank} ({path}:{line})",
        "at": "{title} ({where})",
        "then": "{title} — {started}",
        "where_rank": "{path}:{line}, rank {rank}",
        "waiting": (
            "{count} rank(s) timed out waiting for rank {peer} (named in {lines} line(s)); "
            "its own error is not in these logs: diagnose rank {peer}'s log and plog"
        ),
        "waiting_read": (
            "{count} rank(s) timed out waiting for rank {peer} (named in {lines} line(s)); "
            "its log {path} holds no known Ascend error: read its last lines (did the script raise?) "
            "and rank {peer}'s plog"
        ),
        "waiting_mixed": (
            "{count} rank(s) timed out waiting for rank {peer} (named in {lines} line(s)); "
            "no known Ascend error of rank {peer} was found: read its last lines (did the script raise?) "
            "and rank {peer}'s plog"
        ),
        "silent": (
            "{count} of {world} ranks timed out waiting in a collective; rank {rank} shows no error: "
            "it never joined (it hung, or died without a word): look at its own output{log} and its plog"
        ),
        "silent_log": " ({path})",
    },
    "zh": {
        "nothing": "未发现已知的昇腾故障原因。",
        "not_ascend": "这不是昇腾故障：{title}。",
        "no_failure": "未发生故障：{title}。",
        "no_error": "未发现已知的昇腾故障原因；值得一看：{title}（{where}）。",
        "died": "未发现昇腾原因；任务因 {exception} 退出{raised_at}",
        "died_npu": "任务因一个日志中看不到原因的 NPU 错误退出：{exception}{raised_at}；请一并诊断它的 plog",
        "raised_at": "，抛出位置 {frame}",
        "cut_at": "（最后一帧 {frame}）",
        "cut": (
            "日志在一段 traceback 中间结束{raised_at}，写明异常的那一行之前就截断了：请获取完整输出后再诊断"
        ),
        "started": "首先出现在 {origin}；另有 {count} 个{unit}在等待它时超时",
        "ranks": " rank ",
        "files": "文件",
        "rank": " rank ",
        "file": "文件",
        "rank_at": "rank {rank}（{path}:{line}）",
        "rank_on_node": "节点 {node} 的 rank {rank}（{path}:{line}）",
        "at": "{title}（{where}）",
        "then": "{title}——{started}",
        "where_rank": "{path}:{line}，rank {rank}",
        "waiting": (
            "{count} 个 rank 在等待 rank {peer} 时超时（{lines} 行日志指向它）；"
            "这些日志中没有它自身的报错：请诊断 rank {peer} 的日志和 plog"
        ),
        "waiting_read": (
            "{count} 个 rank 在等待 rank {peer} 时超时（{lines} 行日志指向它）；"
            "它的日志 {path} 中没有已知的昇腾报错：请查看该日志的最后几行（脚本是否抛出了异常？）"
            "和 rank {peer} 的 plog"
        ),
        "waiting_mixed": (
            "{count} 个 rank 在等待 rank {peer} 时超时（{lines} 行日志指向它）；"
            "没有找到 rank {peer} 的已知昇腾报错：请查看它的最后几行输出（脚本是否抛出了异常？）"
            "和 rank {peer} 的 plog"
        ),
        "silent": (
            "{world} 个 rank 中有 {count} 个在集合通信中等待超时；rank {rank} 没有任何报错："
            "它没有加入（卡住了，或无声地退出了）：请查看它自己的输出{log}和它的 plog"
        ),
        "silent_log": "（{path}）",
    },
}


def printable(text: str) -> str:
    """Log text safe for a terminal: control characters (ESC, C1 CSI, ...) shown as `\\x1b` instead of
    being sent, so a log line cannot reset, recolour or retitle the terminal it is shown on."""
    return _CONTROL.sub(lambda found: f"\\x{ord(found.group()):02x}", text)


def message(report: Report, key: str, **values: object) -> str:
    """A fixed report sentence in the report's language."""
    catalog = MESSAGES.get(report.lang, MESSAGES["en"])
    return catalog[key].format(**values)


def earlier_run_note(finding: Finding, lang: str) -> str:
    """`earlier run, 3 days before` for a finding only an earlier run's logs showed, else ""."""
    if finding.earlier_run is None:
        return ""
    days = max(1, round(finding.earlier_run / 86400))
    return LABELS.get(lang, LABELS["en"])["earlier_run"].format(days=days, s="" if days == 1 else "s")


def headline(finding: Finding, lang: str) -> str:
    """The finding's title, marked when only an earlier run showed it: every format shows this."""
    title = finding.rule.title.get(lang).strip()
    note = earlier_run_note(finding, lang)
    if not note:
        return title
    return f"{title}（{note}）" if lang == "zh" else f"{title} ({note})"


class Renderer(Protocol):
    """Formats a report; no filtering, exit codes or environment reads."""

    name: str

    def render(self, report: Report, stream: TextIO) -> None: ...


def where(finding: Finding, report: Report) -> str:
    """`rank5.log:7, rank 5` for the first evidence line of a finding."""
    first = finding.evidence[0]
    if first.rank is None:
        return f"{first.path}:{first.line}"
    return message(report, "where_rank", path=first.path, line=first.line, rank=first.rank)


def spread(report: Report) -> str:
    """For a multi-rank job: where the top cause started and how many ranks waited for it."""
    if not report.findings:
        return ""
    top = report.findings[0]
    if top.rule.category == "hccl_timeout":
        return _waiting_only(report, top)
    first = top.evidence[0]
    victims: set[object] = set(top.waited)
    for finding in report.findings[1:]:
        if finding.role == "consequence":
            victims.update(finding.ranks or finding.paths)
    victims.discard(first.rank)
    victims.discard(first.path)
    if not victims:
        return ""
    unit = "rank" if any(isinstance(v, int) for v in victims) else "file"
    unit = message(report, unit if len(victims) == 1 else unit + "s")
    return message(report, "started", origin=_origin(report, first, top), count=len(victims), unit=unit)


def _origin(report: Report, first: Evidence, top: Finding) -> str:
    """Where the top cause started: its rank, and in a merge of node reports its node."""
    if first.rank is None:
        return where(top, report)
    node = next((record.node for record in report.inputs if record.path == first.path), "")
    if node:
        return message(report, "rank_on_node", node=node, rank=first.rank, path=first.path, line=first.line)
    return message(report, "rank_at", rank=first.rank, path=first.path, line=first.line)


def _waiting_only(report: Report, top: Finding) -> str:
    """Only timeouts were found: name the rank they waited for, whose own error is not here, or
    the one rank that printed no error."""
    ranks_read = {rank_of_path(record.path): record.path for record in report.inputs if not record.skipped}
    if report.waited_for is None:
        return _silent_rank(report, top, ranks_read)
    peer, count = report.waited_for
    waiting = len(top.ranks) or len(top.paths)
    if peer in ranks_read:
        return message(report, "waiting_read", count=waiting, peer=peer, lines=count, path=ranks_read[peer])
    if None in ranks_read:  # a log of several ranks was read: rank 3's lines may well be in it
        return message(report, "waiting_mixed", count=waiting, peer=peer, lines=count)
    return message(report, "waiting", count=waiting, peer=peer, lines=count)


def verdict(report: Report) -> str:
    """One line saying what went wrong, or that nothing Ascend-related was found."""
    if not report.findings:
        return message(report, "nothing")
    top = report.findings[0]
    if top.rule.id in uncaught.RULE_IDS:
        return _died_of(report, top)
    title = top.rule.title.get(report.lang)
    ascend_causes = [
        finding
        for finding in report.findings
        if finding.role == "cause"
        and finding.rule.severity is Severity.ERROR
        and finding.rule.category not in NOT_A_FAILURE
    ]
    if top.rule.category in NOT_A_FAILURE and not ascend_causes:
        return message(report, top.rule.category, title=title)
    if top.rule.severity is Severity.WARNING:  # a warning is not why a job died
        return message(report, "no_error", title=title, where=where(top, report))
    if top.rule.severity is not Severity.ERROR:  # nor is a note (a line known to be harmless)
        return message(report, "nothing")
    started = spread(report)
    if started:
        return message(report, "then", title=title, started=started)
    return message(report, "at", title=title, where=where(top, report))


def _died_of(report: Report, top: Finding) -> str:
    """No rule explains the failure: the exception the job died of, and where it was raised."""
    captured = dict(top.evidence[0].captures)
    frame = captured.get("raised_at", "")
    if top.rule.id in uncaught.CUT_IDS:
        kind = "cut"
    elif top.rule.id == uncaught.UNEXPLAINED_NPU_ERROR.id:
        kind = "died_npu"
    else:
        kind = "died"
    sentence = message(
        report,
        kind,
        exception=captured.get("exception", top.evidence[0].text),
        raised_at=message(report, "cut_at" if kind == "cut" else "raised_at", frame=frame) if frame else "",
    )
    started = spread(report)
    if started:
        return message(report, "then", title=sentence, started=started)
    return message(report, "at", title=sentence, where=where(top, report))


def _silent_rank(report: Report, top: Finding, ranks_read: dict[int | None, str]) -> str:
    """The one rank of the job that printed no error while the others timed out waiting: the
    world is the size the launch lines state, the ranks of the files read (`rank_5.log`), and
    the ranks that timed out; without a stated size, the ranks from 0 to the highest one seen."""
    timed_out = set(top.ranks)
    if not timed_out:
        return ""
    said = {rank for finding in report.findings for rank in finding.ranks}
    world = {rank for rank in ranks_read if rank is not None} | timed_out
    size = max((record.world_size for record in report.inputs), default=0)
    world |= set(range(size or max(world) + 1))
    silent = world - said
    if len(silent) != 1 or len(timed_out) < 2:
        return ""
    rank = silent.pop()
    log = message(report, "silent_log", path=ranks_read[rank]) if rank in ranks_read else ""
    return message(report, "silent", count=len(timed_out), world=len(world), rank=rank, log=log)
