"""Errors a job printed after its work was done: the exit noise of a run that finished, or that an
exception ended.

A `no_failure` rule of kind `cause` marks where an input's work ended (final metrics, a test run
that passed, generated text printed, Ctrl+C); one of kind `symptom` only shows that a step went
well (a server started, a model converted) and ends nothing. What a rule reports as an error after
the end is teardown (a device reset, a process group destroyed late, a `__del__` that failed) and
becomes exit noise; an exception the job raised there still killed it, unless it is the stop
itself (Ctrl+C, SystemExit). After an exception the job died of, torch_npu's exit-time warnings
(`NPU warning, error code is ...`) and what follows them are exit noise too, as is what a
process prints after it says it is exiting (Python shutting down, a process group destroyed at
exit).
"""

from __future__ import annotations

from collections.abc import Sequence

from ascend_doctor import uncaught
from ascend_doctor.model import PROSE, Confidence, Examples, InputRecord, Kind, Match, Rule, Severity, Text
from ascend_doctor.ranking import AT_EXIT, FINISHED

STOPS = ("SystemExit", "KeyboardInterrupt")
# What a rank prints while a job is torn down around it: waits that time out, contexts and
# devices gone, generic runtime errors.
TEARDOWN = frozenset(
    {
        "hccl_timeout",
        "npu_context_not_set",
        "needs_more_evidence",
        "device_unavailable",
        AT_EXIT,
        "hardware_fault",
    }
)
# Lines a process prints as it exits (Python shutting down, torch_npu destroying a process group
# that was never destroyed): what that process prints after them is teardown, whatever came before.
EXITING = frozenset({"outcome.interpreter-shutting-down", "outcome.process-group-destroyed-at-exit"})

EXIT_NOISE = Rule(
    id="outcome.errors-after-finish",
    category=AT_EXIT,
    severity=Severity.WARNING,
    confidence=Confidence.MEDIUM,
    kind=Kind.CAUSE,
    title=Text(
        "Errors printed at exit, after the work had ended",
        "工作结束后、进程退出时打印的错误",
    ),
    cause=Text(
        "The work had ended first: the run finished (see its own success line), or an exception stopped "
        "it (see the finding about that exception). The errors after that come from tearing the process "
        "down: devices reset while streams or events still existed, a process group destroyed late, a "
        "worker killed by its exiting parent. They are not why the job ended and change no result.",
        "工作先已结束：运行已完成（见其自身的成功输出），或被某个异常终止（见关于该异常的发现）。其后的错误"
        "来自进程退出时的清理：设备在流或事件尚存时被复位、进程组销毁过晚、worker 随父进程退出被终止。它们"
        "不是任务结束的原因，也不改变任何结果。",
    ),
    fix=Text(
        "Deal with what ended the work, if anything did; these lines need nothing. To exit cleanly, "
        "destroy the process group (`torch.distributed.destroy_process_group()`) and release NPU objects "
        "before the script ends, and stop servers with one Ctrl+C rather than killing their workers.",
        "如有导致工作结束的问题，先处理它；这些行本身无需处理。若要干净退出：在脚本结束前调用 "
        "`torch.distributed.destroy_process_group()` 并释放 NPU 对象；停止服务时按一次 Ctrl+C，"
        "而不要直接杀掉 worker 进程。",
    ),
    env=(),
    patterns=(),
    examples=Examples((), ()),
    sources=("built in: error lines after a line that says the run finished",),
)
RULES = (EXIT_NOISE,)

_Where = tuple[int, "int | None"]  # (input, rank)


def at_exit(
    records: Sequence[InputRecord], matches: Sequence[Match], rules: Sequence[Rule]
) -> tuple[list[Match], tuple[Rule, ...]]:
    """The matches with one EXIT_NOISE match where each input's exit noise starts, and the rules
    with those whose every error was exit noise made so. Exit noise: what a rank reported as an
    error after its work ended, and torch_npu's exit-time warnings after the exception a job died
    of (uncaught.exit_warnings) with all that follows them. A rule that also fired before (where
    work had not ended) is left alone: it may be why that failed. The end of a line with no rank
    is the whole file's."""
    by_id = {rule.id: rule for rule in rules}
    ended: dict[_Where, int] = {}
    for match in matches:
        rule = by_id[match.rule_id]
        if rule.category == FINISHED and rule.kind is Kind.CAUSE:
            where = (match.input_index, match.evidence.rank)
            ended[where] = min(ended.get(where, match.evidence.line), match.evidence.line)
    exiting = uncaught.exit_warnings(records, matches)
    leaving: dict[_Where, int] = {}  # where each rank said it was exiting
    first_leaving: dict[int, int] = {}  # where any process of each input first did
    for match in matches:
        if match.rule_id in EXITING:
            index, line = match.input_index, match.evidence.line
            where = (index, match.evidence.rank)
            leaving[where] = min(leaving.get(where, line), line)
            first_leaving[index] = min(first_leaving.get(index, line), line)
    if not ended and not exiting and not leaving:
        return list(matches), tuple(rules)
    after: dict[str, list[Match]] = {}
    kept_errors: set[str] = set()
    for match in matches:
        if by_id[match.rule_id].severity is not Severity.ERROR or match.quoted == PROSE:
            continue
        end = _end(ended, match, by_id[match.rule_id])
        line = match.evidence.line
        if (
            line >= exiting.get(match.input_index, line + 1)
            or line > _left(leaving, first_leaving, match)
            or (end is not None and line > end and not _raised_after_the_work(match))
        ):
            after.setdefault(match.rule_id, []).append(match)
        elif end is None or line > end:
            kept_errors.add(match.rule_id)
    noisy = {rule_id: found for rule_id, found in after.items() if rule_id not in kept_errors}
    if not noisy:
        return list(matches), tuple(rules)
    starts: dict[int, Match] = {}
    for match in (match for found in noisy.values() for match in found):
        start = starts.get(match.input_index)
        if start is None or match.evidence.line < start.evidence.line:
            starts[match.input_index] = match
    demoted = {
        rule_id: by_id[rule_id]._replace(category=AT_EXIT, severity=Severity.WARNING, kind=Kind.SYMPTOM)
        for rule_id in noisy
    }
    leads = [start._replace(rule_id=EXIT_NOISE.id, quoted="", repeats=0) for start in starts.values()]
    return [*matches, *leads], (*(demoted.get(rule.id, rule) for rule in rules), EXIT_NOISE)


def _left(leaving: dict[_Where, int], first_leaving: dict[int, int], match: Match) -> float:
    """The line where the match's rank said it was exiting; for a line that names no rank, where
    any process of its file first did (an unprefixed `Segmentation fault` may be any rank's)."""
    if match.evidence.rank is None:
        found = first_leaving.get(match.input_index)
    else:
        found = leaving.get((match.input_index, match.evidence.rank))
    return float("inf") if found is None else found


def _end(ended: dict[_Where, int], match: Match, rule: Rule) -> int | None:
    """Where the work of the match's rank ended, else of its file's lines with no rank. Another
    rank's end, or the file's, says less of this rank: there only what teardown prints (TEARDOWN)
    is exit noise, not an out-of-memory or an operator failure of its own work."""
    found = ended.get((match.input_index, match.evidence.rank))
    if found is not None:
        return found
    if match.evidence.rank is not None and rule.category not in TEARDOWN:
        return None
    return ended.get((match.input_index, None))


def _raised_after_the_work(match: Match) -> bool:
    """An exception the job died of after its work ended: it did die of it, unless it is the stop."""
    if match.rule_id not in uncaught.RULE_IDS:
        return False
    exception = dict(match.evidence.captures).get("exception", "")
    return not exception.split(":", 1)[0].rsplit(".", 1)[-1].startswith(STOPS)
