"""The exception the job died of, as a finding, when no rule explains why it failed.

A log that ends in a traceback no rule knows must not get a blank "no cause found": the report
names the last exception and where it was raised (`KeyError: 'outdoor_scene'` at dataset.py:57),
as not_ascend, or as needs_more_evidence when it is an NPU/ACL runtime error whose cause the log
does not show. It is added only when no rule found an error the job could have died of (the
timeouts of ranks that waited for another do not count: their wait is not why the job failed),
and never to a log a rule calls a run that did not fail. Its confidence is low: below any real
Ascend cause in the same logs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ascend_doctor.model import (
    PROSE,
    Confidence,
    Examples,
    InputRecord,
    Kind,
    Match,
    Raised,
    Rule,
    Severity,
    Text,
)
from ascend_doctor.ranking import FINISHED, REMARKS, finished_lines, waits
from ascend_doctor.read.tracebacks import is_echo, is_exit_warning, is_npu_error, is_wrapper, short_message

# torch_npu's exception for an error the device reported asynchronously: its detail is the CANN
# block printed with it, or at exit.
INNER_ERROR = "The Inner error is reported as above"

UNCAUGHT = Rule(
    id="python.uncaught-exception",
    category="not_ascend",
    severity=Severity.ERROR,
    confidence=Confidence.LOW,
    kind=Kind.CAUSE,
    title=Text(
        "The job died of a Python exception that no Ascend rule explains",
        "任务因一个昇腾规则无法解释的 Python 异常而退出",
    ),
    cause=Text(
        "The last exception the job raised is not one the rule base knows as an Ascend failure: most "
        "often a bug or bad input in the script (a missing key, a wrong path, a shape mismatch) rather "
        "than the NPU stack.",
        "任务最后抛出的异常不在规则库已知的昇腾故障之列：多半是脚本本身的问题（缺少的键、错误的路径、"
        "形状不匹配），而不是 NPU 软件栈。",
    ),
    fix=Text(
        "Read the traceback from the frame that raised it; fix the script or its input there. If the "
        "exception does come from the NPU stack, rerun with ASCEND_GLOBAL_LOG_LEVEL=1 and diagnose the "
        "plog too.",
        "从抛出异常的那一帧开始阅读 traceback，在那里修正脚本或输入。如果异常确实来自 NPU 软件栈，"
        "请设置 ASCEND_GLOBAL_LOG_LEVEL=1 重跑，并一同诊断 plog。",
    ),
    env=(),
    patterns=(),
    examples=Examples((), ()),
    sources=("built in: the last exception of a log no rule explains",),
)
UNEXPLAINED_NPU_ERROR = UNCAUGHT._replace(
    id="python.unexplained-npu-error",
    category="needs_more_evidence",
    title=Text(
        "The job died of an NPU runtime error whose cause the log does not show",
        "任务因一个 NPU 运行时错误退出，日志中看不到其原因",
    ),
    cause=Text(
        "The exception comes from the NPU stack (torch_npu, ACL, HCCL), but no line of the log says why: the "
        "cause was written to the device's logs (plog), or came before what was captured.",
        "异常来自 NPU 软件栈（torch_npu、ACL、HCCL），但日志中没有说明原因的行："
        "原因写在了设备日志（plog）中，或者发生在所截取的日志之前。",
    ),
    fix=Text(
        "Collect the plog of the failing process (~/ascend/log/debug/plog, or $ASCEND_PROCESS_LOG_PATH) "
        "and diagnose it with this log; rerun with ASCEND_GLOBAL_LOG_LEVEL=1 and "
        "ASCEND_LAUNCH_BLOCKING=1 to see the failing operator.",
        "收集出错进程的 plog（~/ascend/log/debug/plog 或 $ASCEND_PROCESS_LOG_PATH），与本日志一同诊断；"
        "设置 ASCEND_GLOBAL_LOG_LEVEL=1 和 ASCEND_LAUNCH_BLOCKING=1 重跑，可以看到出错的算子。",
    ),
    sources=("built in: the last exception of a log no rule explains, an NPU runtime error",),
)
CUT_TRACEBACK = UNCAUGHT._replace(
    id="python.traceback-cut-off",
    title=Text(
        "The log ends inside a traceback: the exception the job died of is cut off",
        "日志在一段 traceback 中间结束：任务因何异常退出的那一行被截掉了",
    ),
    cause=Text(
        "The last lines are the frames of a Python traceback, but the line that names the exception "
        "(`SomeError: message`), which comes after them, is not in the log: the output was cut (a pasted "
        "excerpt, a tail, a full disk or a killed pipe). The frames only say where it happened.",
        "最后几行是 Python traceback 的调用帧，但其后写明异常的那一行（`SomeError: message`）不在日志中："
        "输出被截断了（粘贴的节选、tail、磁盘写满或管道被杀）。调用帧只说明异常发生在哪里。",
    ),
    fix=Text(
        "Get the whole output of the failing process (its log file, or rerun with `2>&1 | tee run.log`) and "
        "diagnose it again; the exception line and the CANN lines around it name the cause.",
        "获取出错进程的完整输出（其日志文件，或以 `2>&1 | tee run.log` 重跑）后再诊断；"
        "异常那一行及其附近的 CANN 日志会说明原因。",
    ),
    sources=("built in: a log that ends inside a traceback",),
)
# The same, in logs that show an NPU: an NPU job's failure whose cause is not in the log.
CUT_NPU_TRACEBACK = CUT_TRACEBACK._replace(id="python.npu-traceback-cut-off", category="needs_more_evidence")
RULES = (UNCAUGHT, UNEXPLAINED_NPU_ERROR, CUT_TRACEBACK, CUT_NPU_TRACEBACK)
CUT_IDS = frozenset({CUT_TRACEBACK.id, CUT_NPU_TRACEBACK.id})
RULE_IDS = frozenset(rule.id for rule in RULES)

_Where = tuple[int, "int | None"]
_NEVER = 1 << 62  # a line number no input reaches


# Warnings that name no cause of a failure: the rest, in a job that died of an exception no rule
# explains, are the likeliest reason it died (a version mismatch the framework warned about).
HARMLESS_WARNINGS = REMARKS | {FINISHED}


def with_death(
    records: Sequence[InputRecord], matches: Sequence[Match], rules: Sequence[Rule]
) -> tuple[list[Match], tuple[Rule, ...]]:
    """The matches with the exception each input died of (see died_of), and the rules as ranked.
    Where an exception is named, the echo of it (torch_npu's ERR99999) is dropped: it is that
    exception, said again; and a warning of the same input that names a cause becomes an error,
    which outranks the exception: the exception is how the job died, the warning why."""
    deaths = died_of(records, matches, rules)
    if not deaths:
        return list(matches), tuple(rules)
    dead = {death.input_index for death in deaths}
    kept = [m for m in matches if m.input_index not in dead or not is_echo(m.evidence.text)]
    by_id = {rule.id: rule for rule in rules}
    why = {
        m.rule_id
        for m in kept
        if m.input_index in dead and m.quoted != PROSE and _names_a_cause(by_id[m.rule_id])
    }
    raised = tuple(rule._replace(severity=Severity.ERROR) if rule.id in why else rule for rule in rules)
    return kept + deaths, raised


def _names_a_cause(rule: Rule) -> bool:
    return (
        rule.severity is Severity.WARNING
        and rule.kind is Kind.CAUSE
        and rule.category not in HARMLESS_WARNINGS
    )


def died_of(records: Sequence[InputRecord], matches: Sequence[Match], rules: Iterable[Rule]) -> list[Match]:
    """One match per input for the exception it died of, or none when a rule found an error the
    job could have died of; an exception printed before the input says the run finished is none
    it died of (a handled one, logged). An echo of the exception is no such
    error."""
    by_id = {rule.id: rule for rule in rules}
    timed_out: set[_Where] = set()
    errors: list[Match] = []
    finished = finished_lines(matches, by_id)
    exiting = exit_warnings(records, matches)
    for match in matches:
        rule = by_id[match.rule_id]
        if rule.category == FINISHED:
            continue
        if rule.severity is not Severity.ERROR or match.quoted == PROSE or is_echo(match.evidence.text):
            continue
        if match.evidence.line >= exiting.get(match.input_index, _NEVER):
            continue  # what torch_npu warned about while the process exited, after the exception
        errors.append(match)
        if waits(rule) and match.evidence.rank is not None:
            timed_out.add((match.input_index, match.evidence.rank))
    for match in errors:
        if not waits(by_id[match.rule_id]) and (match.input_index, match.evidence.rank) not in timed_out:
            return []
    found = []
    for index, record in enumerate(records):
        after = finished.get(index, -1)  # what was raised before the run finished did not end it
        raised = _last([one for one in record.raised if one.end > after], index, errors, timed_out)
        if raised is not None:
            found.append(_match(raised, index, record.ascend_seen))
    return found


def exit_warnings(records: Sequence[InputRecord], matches: Sequence[Match]) -> dict[int, int]:
    """Where each input's exit noise starts: the first line a rule matched, after the last
    exception it printed, that is torch_npu's exit-time warning (`NPU warning, error code is 507899 ...
    (function npuSynchronizeUsedDevices)`). What follows it was said while the process exited.
    After an NPU error that only points at a report (`The Inner error is reported as above`), the
    exit-time block is that report: the device's error comes out at exit, and it is no noise."""
    last = {
        index: max(one.end for one in died)
        for index, record in enumerate(records)
        if (died := [one for one in record.raised if not _points_at_a_report(one)])
    }
    starts: dict[int, int] = {}
    for match in matches:
        line, index = match.evidence.line, match.input_index
        if index in last and line > last[index] and is_exit_warning(match.evidence.text):
            starts[index] = min(starts.get(index, line), line)
    return starts


def _points_at_a_report(raised: Raised) -> bool:
    return is_npu_error(raised) or INNER_ERROR in raised.message


def _last(
    raised: Sequence[Raised], index: int, errors: Sequence[Match], timed_out: set[_Where]
) -> Raised | None:
    """The root of the last chain of exceptions in one input, unless a rule explains it; none of
    a rank that timed out, and a launcher's summary exception only when nothing else failed (it
    names no cause, and beside timeouts it only ends the ranks that waited)."""
    if any(one.name for one in raised):  # a traceback cut off says less than any named exception
        raised = [one for one in raised if one.name]
    chains: dict[object, list[Raised]] = {}
    for number, one in enumerate(raised):
        chains.setdefault(one.chain or ("alone", number), []).append(one)
    wrapper = None
    for chain in reversed(list(chains.values())):
        root = chain[0]
        if (index, root.evidence.rank) in timed_out:
            continue
        if is_wrapper(root):
            wrapper = wrapper or root
            continue
        if any(_explains(match, index, one) for one in chain for match in errors):
            return None  # the job died of what a rule found
        return root
    return None if errors else wrapper


def _explains(match: Match, index: int, raised: Raised) -> bool:
    """Whether an error a rule found is inside an exception's traceback or message."""
    return match.input_index == index and raised.start <= match.evidence.line <= raised.end


def _match(raised: Raised, index: int, npu_seen: bool) -> Match:
    if not raised.name:
        rule = CUT_NPU_TRACEBACK if npu_seen else CUT_TRACEBACK
    else:
        rule = UNEXPLAINED_NPU_ERROR if is_npu_error(raised) else UNCAUGHT
    captures = (("exception", short_message(raised)), ("raised_at", raised.frame))
    evidence = raised.evidence._replace(captures=tuple(pair for pair in captures if pair[1]))
    return Match(rule.id, 0, evidence, index)
