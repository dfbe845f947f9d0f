"""The Python exceptions a log ends with: what the job died of when no rule knows the failure.

Read from the last bytes of an input (the scanner keeps them; nothing is read twice). Each rank's
lines are followed apart (`[rank3]:` prefixes interleave in one log of all ranks): a traceback
header or frame line starts a traceback, its first line that is not indented is the exception.
Chained exceptions ("During handling of the above exception…", "The above exception was the
direct cause…") are one chain whose first exception is its root; DataLoader's "Original
Traceback" is the root of the exception that re-raised it. A traceback Python prints for an
exception it ignores (`Exception ignored in:`, `Error in atexit._run_exitfuncs:`, `--- Logging
error ---`) is not a death, and a launcher's exception (torchrun's `ChildFailedError`, mp.spawn's
`ProcessRaisedException`, `CalledProcessError`) only wraps the worker's.
"""

from __future__ import annotations

from collections.abc import Iterable

from ascend_doctor.model import Evidence, Raised
from ascend_doctor.read import events
from ascend_doctor.regexes import regex

TAIL = 64 * 1024  # the bytes of an input's end that are searched for its last exceptions
MAX_RAISED = 16  # the last exceptions kept per input
MAX_MESSAGE_LINES = 30  # lines after an exception line that may still be its message
MAX_MESSAGE = 300  # characters of an exception's message that are shown
BARE_BYTES = 4096  # the end of a log searched for an exception line without a traceback

_HEADER = regex(r"(?:Original )?Traceback \(most recent call last\):$")
_FRAME = regex(r'\s*File "(?P<file>[^"]+)", line (?P<line>\d+)')
_EXCEPTION = regex(r"(?P<name>(?:[A-Za-z_]\w*\.)*[A-Z]\w*)(?::[ \t]*(?P<message>.*))?$")
# A line that ends a log and names an exception class although no traceback came before it.
_BARE = regex(r"(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Interrupt|Failure|Fault):")
_CHAIN = ("During handling of the above exception", "The above exception was the direct cause")
_IGNORED = ("Exception ignored in", "--- Logging error ---", "Error in atexit._run_exitfuncs")
# What a launcher raises when a worker failed: mp.spawn, torchrun, deepspeed's runner.
WRAPPERS = frozenset(
    {
        "ChildFailedError",
        "CalledProcessError",
        "ProcessRaisedException",
        "SignalException",
        "SystemExit",
        "EngineDeadError",
    }
)
# ... and what a serving engine raises when one of its workers failed: vLLM's executor and engine
# core point back at the worker's own error.
_WRAPPER_MESSAGE = regex(
    r"^Worker failed\b|stack trace \(?above\)? for the root cause|EngineCore encountered an issue"
)
# What a framework prints after any uncaught exception, whatever it was: torch_npu's exception hook
# ends every failed run with this line (sic "applicaiton"). It says nothing the exception does not.
_ECHO = regex(r"\bERR99999 UNKNOWN applica(?:ti|it)on exception")
# torch_npu's form for an error it can only warn about: in destructors and in the device
# synchronisation at interpreter exit (npuSynchronizeUsedDevices), after whatever ended the job.
_EXIT_WARNING = regex(r"\bNPU warning, error code is \d+")
# What an NPU, ACL or HCCL runtime error says of itself (not a Python error that names npu or a
# torch_npu path): its cause is in the device's logs.
_NPU = regex(
    r"\bNPU (?:function )?error|\bACL\b.*\berror|\bacl[A-Z]?\w*(?: api)? (?:failed|error)|\bHCCL\b.*\berror"
    r"|\bE[A-Z]\d{4}\b|\bERR\d{5}\b|error code(?: is|:|=)?\s*[1-5]\d{5}\b"
)


class _Track:
    """One rank's lines: the traceback being read, and the chain it belongs to."""

    def __init__(self) -> None:
        self.start = 0  # the line of its header or first frame; 0 outside a traceback
        self.frame = ""  # the last frame seen, as `file:line`
        self.ignored = False  # Python printed it for an exception it ignored
        self.chained = False  # the next traceback continues the current chain
        self.chain = 0
        self.open: Raised | None = None  # the exception whose message lines are being read
        self.last: Evidence | None = None  # its last frame or source line, while it has no exception

    def begin(self, line: int, header: str, chains: int) -> int:
        """A traceback starts at `line`: it opens a new chain unless one continues. Returns the
        number of chains so far."""
        if not self.chained or header.startswith("Original"):  # DataLoader's worker: the root
            chains += 1
            self.chain = chains
        self.start, self.chained = line, False
        return chains


def _clean(raw: bytes) -> tuple[str, int | None]:
    """A physical line as printed: no colour codes, progress-bar parts or rank prefix; the
    indentation is kept (it tells a frame from an exception)."""
    text = events.decode(raw)
    if "\x1b" in text:
        text = events.ANSI.sub("", text)
    text = text.replace("\ufeff", "").rsplit("\r", 1)[-1]
    text, rank = events.strip_prefixes(text)
    return text.rstrip(), rank


def where(path: str, line: str) -> str:
    """`dataset.py:57`, or `torch/nn/modules/module.py:1501` for a file of an installed package."""
    for marker in ("site-packages/", "dist-packages/"):
        if marker in path:
            return f"{path.rsplit(marker, 1)[1]}:{line}"
    return f"{path.replace(chr(92), '/').rsplit('/', 1)[-1]}:{line}"


def last_raised(tail: bytes, end_line: int, label: str, path_rank: int | None) -> tuple[Raised, ...]:
    """The exceptions in `tail`, the last bytes of an input, whose last line end is followed by
    line `end_line` (its first line is partial when it was cut from a longer input), the most
    recent last. Only a tail with a traceback header is read whole: without one, its last
    BARE_BYTES may hold the frames of an excerpt, or only its last line an exception."""
    if not tail:
        return ()
    if tail.find(b"Traceback (most recent call last)") < 0:
        tail = tail[-BARE_BYTES:]
        if b'File "' not in tail:
            return _bare(tail, end_line, label, path_rank)
    lines = tail.split(b"\n")
    first_line = end_line - len(lines) + 1
    found: list[Raised] = []
    tracks: dict[int | None, _Track] = {}
    chains = 0
    for offset in range(1 if first_line > 1 else 0, len(lines)):
        text, rank = _clean(lines[offset])
        track = tracks.setdefault(rank, _Track())
        number = first_line + offset
        opened = track.open
        if opened is not None:
            if text.strip() and number - opened.end <= MAX_MESSAGE_LINES and not _ends_message(text):
                track.open = opened._replace(end=number)
                continue
            found.append(opened)
            track.open = None
        stripped = text.strip()
        frame = _FRAME.match(text)
        if stripped.startswith(_CHAIN):
            track.chained = True
        elif stripped.startswith(_IGNORED):
            track.ignored = True
        elif _HEADER.match(stripped) or (frame and not track.start):
            chains = track.begin(number, stripped, chains)
            track.frame = where(frame["file"], frame["line"]) if frame else ""
            track.last = None
        elif track.start and (frame or text[:1].isspace()):
            if frame:
                track.frame = where(frame["file"], frame["line"])
            if stripped:
                track.last = Evidence(label, number, _shown(stripped), path_rank if rank is None else rank)
        elif track.start and text and not text[:1].isspace():
            exception = _EXCEPTION.match(text)
            if exception is None:
                continue  # another process's line, printed into this traceback
            if not track.ignored:
                evidence = Evidence(label, number, _shown(stripped), path_rank if rank is None else rank)
                message = (exception["message"] or "").strip()
                track.open = Raised(
                    evidence, exception["name"], message, track.start, number, track.frame, track.chain
                )
            track.start, track.frame, track.ignored, track.last = 0, "", False, None
    found.extend(track.open for track in tracks.values() if track.open is not None)
    found.extend(_cut(tracks.values(), lines, end_line))
    found.sort(key=lambda raised: raised.evidence.line)
    return tuple(found[-MAX_RAISED:])


def _cut(tracks: Iterable[_Track], lines: list[bytes], end_line: int) -> list[Raised]:
    """A traceback the input ends inside (an excerpt cut before its exception line): an exception
    with no name, at its last line."""
    last_line = end_line - next((n for n, raw in enumerate(reversed(lines)) if raw.strip()), 0)
    return [
        Raised(track.last, "", "", track.start, track.last.line, track.frame, track.chain)
        for track in tracks
        if track.start and not track.ignored and track.last is not None and track.last.line == last_line
    ]


def _ends_message(text: str) -> bool:
    stripped = text.strip()
    return bool(
        _HEADER.match(stripped)
        or stripped.startswith(_CHAIN + _IGNORED)
        or _FRAME.match(text)
        or is_exit_warning(stripped)  # torch_npu warning at exit, after the exception was printed
    )


def _bare(tail: bytes, end_line: int, label: str, path_rank: int | None) -> tuple[Raised, ...]:
    """A log that ends with an exception line and holds no traceback (an excerpt): that line."""
    lines = tail.split(b"\n")
    whole = -1 if len(tail) < BARE_BYTES else 0  # whether lines[0] may be read: not cut
    for offset in range(len(lines) - 1, max(len(lines) - 4, whole), -1):
        text, rank = _clean(lines[offset])
        if not text.strip():
            continue
        exception = _EXCEPTION.match(text) if _BARE.match(text) else None
        if exception is None:
            return ()
        number = end_line - (len(lines) - 1 - offset)
        evidence = Evidence(label, number, _shown(text), rank if rank is not None else path_rank)
        message = (exception["message"] or "").strip()
        return (Raised(evidence, exception["name"], message, number, number),)
    return ()


def _shown(text: str) -> str:
    return text if len(text) <= 1000 else text[:999] + "…"


def is_wrapper(raised: Raised) -> bool:
    """Whether an exception only reports that a worker (a launched process) failed."""
    return raised.name.rsplit(".", 1)[-1] in WRAPPERS or bool(_WRAPPER_MESSAGE.search(raised.message))


def is_echo(text: str) -> bool:
    """Whether a line only repeats that the job raised an exception (torch_npu's ERR99999)."""
    return bool(_ECHO.search(text))


def is_exit_warning(text: str) -> bool:
    """Whether a line is torch_npu's warning about an error it could not raise (at exit)."""
    return bool(_EXIT_WARNING.search(text))


def is_npu_error(raised: Raised) -> bool:
    """Whether an exception is an NPU or ACL runtime error (its cause is in the device logs)."""
    return bool(_NPU.search(raised.message))


def short_message(raised: Raised) -> str:
    """`KeyError: 'outdoor_scene'`, its message cut to MAX_MESSAGE characters."""
    message = (
        raised.message if len(raised.message) <= MAX_MESSAGE else raised.message[: MAX_MESSAGE - 1] + "…"
    )
    return f"{raised.name}: {message}" if message else raised.name
