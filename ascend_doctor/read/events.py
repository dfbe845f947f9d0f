"""One raw log line -> the clean text segments rules see, plus its rank, time and plog level."""

from __future__ import annotations

import re
import time
from functools import lru_cache
from typing import Any

from ascend_doctor.regexes import regex

ANSI_BYTES = regex(rb"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\n]*(?:\x07|\x1b\\)|[@-Z\\-_])")
ANSI = regex(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\n]*(?:\x07|\x1b\\)|[@-Z\\-_])")
# The UTC time kubectl/docker --timestamps and CI raw logs put before every line.
_ISO_TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z"
_PREFIX = regex(
    r"""^\s*(?:
        \[(?:rank|default)\s*(?P<r1>\d+)\](?::\s?|\s)  # [rank3]: [rank 3]: [default3]: [rank3] (a script's)
      | rank\s*(?P<r2>\d+):\s                        # rank3: (torchrun)
      | \((?:VllmWorker\w*|EngineCore\w*|RayWorkerWrapper|Worker\w*)\s+(?:rank=(?P<r3>\d+)\s+)?pid=\d+\)\s*
      | (?:INFO|WARNING|ERROR|DEBUG|CRITICAL)\s\d\d-\d\d\s\d\d:\d\d:\d\d(?:\.\d+)?\s\[[^\]]*\]\s
      | """
    + _ISO_TIME
    + r"""\s
    )""",
    re.VERBOSE,
)
_RANK_IN_LINE = regex(r"RankID:\s?(\d+)\)|\[Rank\s?(\d+)\]")
_PID = regex(r"\[PID:\s?(\d{1,9})\]")
_RANK_IN_PATH = regex(r"^(?:rank|worker)[_-]?(\d+)(?:\.[\w.]+)?$", re.IGNORECASE)
_REMOTE_RANK = regex(r"remote[ _]?rank\s*(?:\[|:|=|\s)\s*(\d+)", re.IGNORECASE)
_TIME_BYTES = regex(
    rb"20\d\d-\d\d-\d\d[ T-]\d\d:\d\d:\d\d(?:[.,]\d{1,6})?(?:\.\d{3})?(?:Z|[+-]\d\d:?\d\d\b)?"
)
_TIME = regex(
    r"(?P<y>20\d\d)-(?P<mo>\d\d)-(?P<d>\d\d)[ T-](?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)"
    r"(?:[.,](?P<ms>\d{1,6}))?(?:\.(?P<us>\d{3}))?(?P<zone>Z|[+-]\d\d:?\d\d\b)?"
)
_PLOG = regex(
    r"^\[(?P<level>ERROR|WARNING|INFO|DEBUG|EVENT|TRACE)\]\s+(?P<module>[A-Z][\w-]*)\(-?\d+,[^)]*\):"
)
_PLOG_FULL = regex(
    r"^\[(?P<level>[A-Z]+)\]\s+(?P<module>[A-Z][\w-]*)\((?P<pid>-?\d+),(?P<pname>[^)]*)\):"
    r"(?P<time>\S+)\s+(?:\[(?P<where>[^\]]*)\])?(?P<tid>\d+)?\s*(?P<message>.*)$"
)
_PLOG_MATCHED_LEVELS = frozenset({"ERROR", "WARNING"})
# A command a shell echoed (`set -x`), not output of the job: `+ grep -c EL0004 train.log` names
# codes it only looks for.
_SHELL_TRACE = regex(r"\++ \S")
# A Python traceback's frame line; the indented line under it is the source it quotes.
_FRAME = regex(r'File "[^"]*", line \d+')
MAX_SEGMENT = 16 * 1024
# Prose that names an error rather than reports it (a hint, a comment, a doc line, a command that
# looks for a code). A line that starts like a hint or a command that looks for text:
_HINT = regex(
    r"(?:hint|tips?|note)\s*[:：]|//|[-*]\s+[^`]*`|(?:[$#]\s*)?(?:echo|printf|grep|egrep|zgrep|rg)\s",
    re.IGNORECASE,
)
# A comment or a quote, and the words that make one an explanation (`# EL0004 means ...`): a `#`
# line alone may be a heading that repeats the error (`# RuntimeError: ...`), and a `>` line the
# error quoted in an issue.
_COMMENT = regex(r"(?:#+|>)\s")
_EXPLAINS = regex(
    r"\b(?:means?|e\.g\.|i\.e\.|for example|if you|when you|you (?:will |may |might )?see)\b", re.IGNORECASE
)
# Words right before a quoted code that make it an example (`if you see 'EL0004: ...'`).
_CUE = regex(
    r"\b(?:if you (?:see|get|hit)|when you (?:see|get|hit)|you (?:will |may |might )?see|see|seeing|means?|"
    r"e\.g\.|i\.e\.|for example|such as|like|look for|search for)[\s,:]*$",
    re.IGNORECASE,
)
_CONDITIONAL = regex(r"(?:if|when|whenever)\s", re.IGNORECASE)  # `If training stops with "EL0004..."`
_QUOTES = {"'": "'", '"': '"', "`": "`", "\u201c": "\u201d", "\u2018": "\u2019"}


def decode(raw: bytes) -> str:
    """UTF-8, then GB18030 (common on Chinese servers), then UTF-8 with replacement."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        return raw.decode("gb18030")
    except UnicodeDecodeError:
        return raw.decode("utf-8", errors="replace")


def strip_prefixes(text: str) -> tuple[str, int | None]:
    """Remove rank / worker prefixes (repeatedly); return the text and the rank they named."""
    rank: int | None = None
    while True:
        match = _PREFIX.match(text)
        if not match or match.end() == 0:
            return text, rank
        number = match.group("r1") or match.group("r2") or match.group("r3")
        if number is not None and rank is None:
            rank = int(number)
        text = text[match.end() :]


def _json_strings(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for item in value.values():
            _json_strings(item, out)
    elif isinstance(value, list):
        for item in value:
            _json_strings(item, out)


def _expand_json(text: str) -> list[str]:
    """A JSON log record holding a whole traceback becomes its text lines."""
    stripped = text.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        return [text]
    try:
        import json  # only for a line that looks like a JSON record

        record = json.loads(stripped)
    except ValueError:
        return [text]
    strings: list[str] = []
    _json_strings(record, strings)
    return [line for string in strings for line in string.splitlines()] or [text]


def segments(line: str) -> list[tuple[str, int | None]]:
    """The clean pieces of one physical line, each with the rank its prefix named: split at `\\r`
    and inside JSON records; no ANSI, rank prefix or BOM; at most MAX_SEGMENT characters each;
    none for a command a shell echoed."""
    if "\x1b" in line:
        line = ANSI.sub("", line)
    pieces: list[tuple[str, int | None]] = []
    for part in line.replace("\ufeff", "").split("\r"):
        if not part.strip():
            continue
        for piece in _expand_json(part):
            clean, rank = strip_prefixes(piece)
            clean = clean.strip()
            if clean and not _SHELL_TRACE.match(clean):
                pieces.append((clean[:MAX_SEGMENT], rank))
    return pieces


def quoted_source(line: str, previous: str) -> bool:
    """Whether a line is the source line a Python traceback quotes under its frame line
    (`File "x.py", line 3, in f` then `    raise RuntimeError("...")`): code, not something the job
    printed, so no sighting of what it names. `previous` is the clean segment before it; the
    line is indented (an exception line right after a frame whose source is unknown is not)."""
    return bool(_FRAME.match(previous)) and strip_prefixes(line)[0][:1].isspace()


def _chinese(char: str, punctuation: bool = False) -> bool:
    """Whether a character is a CJK ideograph, or (with `punctuation`) CJK or full-width punctuation.
    Compared by code point: a `re` class of these ranges costs every run ~4 ms to compile."""
    if not char:
        return False
    point = ord(char)
    return 0x4E00 <= point <= 0x9FFF or (
        punctuation and (0x3000 <= point <= 0x303F or 0xFF00 <= point <= 0xFFEF)
    )


def prose(piece: str, span: tuple[int, int]) -> bool:
    """Whether a clean segment only talks about what a rule matched in it at `span`: a hint,
    tip or note, a `//` comment, a markdown bullet quoting code, a command that prints or looks
    for it (`echo "EL0004"`, `grep EL0004`), a `#` comment or `>` quote that explains it, the
    matched text in quotes right after words like `if you see`, `e.g.`, `means` or in a
    sentence that starts with `if` or `when`, or named inside a Chinese sentence (`没看到 EZ9999
    之类的报错`; not `报错：EL0004: Failed to allocate memory`, a message pasted after a word)."""
    if _HINT.match(piece):
        return True
    if any(_chinese(char) for char in piece[max(0, span[0] - 12) : span[0]]) and _chinese(
        piece[span[1] :].lstrip()[:1], punctuation=True
    ):
        return True
    if _COMMENT.match(piece) and _EXPLAINS.search(piece):
        return True
    start, end = span
    opening = max(piece.rfind(mark, 0, start + 1) for mark in _QUOTES)
    if opening < 0 or piece.find(_QUOTES[piece[opening]], max(end - 1, opening + 1)) < 0:
        return False
    return bool(_CONDITIONAL.match(piece) or _CUE.search(piece, 0, opening))


def rank_in_text(line: str) -> int | None:
    """The rank a message names, as torch_npu's `RankID:N` or `[Rank N]`."""
    match = _RANK_IN_LINE.search(line)
    if match:
        number = next(group for group in match.groups() if group is not None)
        value = int(number)
        return value if value < 1_000_000 else None
    return None


def rank_by_process(line: str, before: bytes) -> int | None:
    """The rank of a CANN line that names only its process (`EZ9999: [PID: 48203] ...`), from an
    earlier torch_npu line of that process in the bytes before it (`(PID:48203, Device:3,
    RankID:3)`): in a log where all ranks write, the line itself says no rank."""
    process = _PID.search(line)
    if process is None:
        return None
    ranks = re.findall(
        rb"PID:\s?" + process.group(1).encode() + rb",\s?Device:\s?\d+,\s?RankID:\s?(\d+)\)", before
    )
    return int(ranks[-1]) if ranks else None


# torchrun's failure summary: each failure is an entry (`[0]:`) whose `rank : 3 (local_rank: 3)` line
# comes before its traceback; the summary ends with a rule of `=`.
_LINE_START = rb"\n(?:" + _ISO_TIME.encode() + rb" )?"
_SUMMARY_RANK = regex(_LINE_START + rb"\s*rank\s*:\s*(\d{1,7}) \(local_rank: \d+\)\s*\n")
_SUMMARY_BREAK = regex(_LINE_START + rb"\s*(?:\[\d+\]:|={20})")


def rank_in_failure_summary(before: bytes) -> int | None:
    """The rank of a line inside an entry of torchrun's failure summary ("Root Cause (first
    observed failure)"), whose traceback lines name none."""
    ranks = list(_SUMMARY_RANK.finditer(before))
    if not ranks or _SUMMARY_BREAK.search(before, ranks[-1].end() - 1):
        return None
    return int(ranks[-1].group(1))


def rank_of_path(path: str) -> int | None:
    """The rank a file or directory name says (`rank5.log`, `worker-3.log`, `rank_2/`, and in a merge
    of node reports `npu-17:rank5.log`)."""
    for component in reversed(re.split(r"[/\\:]", path)):
        match = _RANK_IN_PATH.match(component)
        if match:
            return int(match.group(1))
    return None


def remote_rank(text: str) -> int | None:
    """The peer a timeout names as the one it waited for (`remote rank [5]`)."""
    match = _REMOTE_RANK.search(text)
    return int(match.group(1)) if match else None


def timestamp_of(line: str) -> float | None:
    """Seconds since the epoch of the first date-time in the line, or None. A time with a zone
    (`Z`, `+08:00`: kubectl, CI raw logs) is read in it; one without (CANN plogs, Python's logging)
    is the local time of the machine that wrote it, taken to be this machine's zone."""
    match = _TIME.search(line)
    if not match:
        return None
    second = int(match["s"])
    if second > 59:
        return None
    local = None if match["zone"] else (time.tzname, time.timezone)  # the zone the cache holds times in
    minute = _minute(match["y"], match["mo"], match["d"], match["h"], match["mi"], match["zone"], local)
    if minute is None:
        return None
    seconds = minute + second
    fraction = match["ms"] or ""
    value = float(seconds) + (float("0." + fraction) if fraction else 0.0)
    if match["us"]:
        value += int(match["us"]) / 1e6
    return value


@lru_cache(maxsize=4096)
def _minute(
    year: str, month: str, day: str, hour: str, minute: str, zone: str | None, local: object
) -> float | None:
    """The epoch seconds a minute of a log's clock began, or None for a date that does not exist.
    Cached: the lines of a log share their minutes, and a local time costs a time-zone lookup.
    `local`: this process's zone, for a time without its own (the key of what the cache holds)."""
    from datetime import datetime  # only once a line has a date: importing it costs 2-3 ms

    try:
        fields = (int(year), int(month), int(day), int(hour), int(minute))
        return datetime(*fields, tzinfo=_zone(zone)).timestamp()
    except (ValueError, OverflowError, OSError):
        return None


def _zone(text: str | None) -> Any:
    """The zone a time names (`Z`, `+08:00`, `-0700`); None (local time) when it names none."""
    if not text:
        return None
    from datetime import timedelta, timezone

    if text == "Z":
        return timezone.utc
    digits = text[1:].replace(":", "")
    offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    return timezone(-offset if text[0] == "-" else offset)  # ValueError past 24 hours


def plog_message(line: str) -> str | None:
    """A CANN plog line as evidence, None for any other line: level, module, process, time, source
    file and message, as CANN wrote them, without the thread id glued to the source file
    (`[ERROR] RUNTIME(31337,python):2024-12-04-15:32:53.009.508 [stream.cc:1000] message`)."""
    match = _PLOG_FULL.match(line)
    if not match:
        return None
    where = f" [{match['where']}]" if match["where"] else ""
    process = f"{match['module']}({match['pid']},{match['pname']}):{match['time']}"
    return f"[{match['level']}] {process}{where} {match['message'].strip()}"


def last_timestamp(before: bytes) -> float | None:
    """The time of the latest timestamp in the bytes before a line: a traceback line has no time
    of its own, but happened right after the last line that had one."""
    stamps = _TIME_BYTES.findall(before)
    return timestamp_of(stamps[-1].decode("ascii")) if stamps else None


def plog_start(head: bytes) -> bool:
    """Whether bytes start with a CANN plog line (`[ERROR] RUNTIME(4821,python):...`)."""
    return bool(_PLOG.match(head.decode("ascii", "replace")))


def skipped_plog_level(line: str) -> bool:
    """True for CANN plog lines below WARNING (INFO, DEBUG, EVENT, TRACE): never matched."""
    match = _PLOG.match(line)
    return bool(match) and match["level"] not in _PLOG_MATCHED_LEVELS
