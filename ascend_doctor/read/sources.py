"""Inputs: expand paths and directories, open files and stdin, undo compression, refuse binaries."""

from __future__ import annotations

import codecs
import io
import os
import stat
import zlib
from collections.abc import Iterator, Sequence
from typing import Any, BinaryIO, NamedTuple

from ascend_doctor.regexes import regex

STDIN = "-"
_NAME_CONTROL = regex(r"[\x00-\x1f\x7f-\x9f]")
EMPTY_STDIN = "empty input: nothing came in on standard input"
SNIFF = 8192


class InputItem(NamedTuple):
    """One thing to read: a file or stdin, or something skipped with the reason why. `size` is
    what the walk saw (-1 where it did not look: stdin, a named file, a symbolic link), and
    `identity` the file's (device, inode) where the walk had it."""

    path: str
    explicit: bool
    skip_reason: str = ""
    size: int = -1
    identity: tuple[int, int] | None = None

    @property
    def is_stdin(self) -> bool:
        return self.path == STDIN

    @property
    def label(self) -> str:
        """The path as reports and messages show it: bytes of the name that are not UTF-8 (a
        GBK-named file) as `\\xNN`, since no report can be written with the undecodable name in
        it, and control characters too: a file named `x\\n::error::y` must not start a line, a CI
        workflow command, on stderr."""
        name = os.fsencode(self.path).decode("utf-8", "backslashreplace")
        return _NAME_CONTROL.sub(lambda found: f"\\x{ord(found.group()):02x}", name)


# How the skip reasons below begin when a path could not be opened at all, as opposed to opened
# and found not to be a log (binary, empty, an archive, corrupt compression, a report, a repeat).
_NOT_OPENED = (
    "no such file or directory",
    "broken symbolic link",
    "permission denied",
    "cannot stat",
    "cannot open",
    "cannot list",
)


def could_not_open(reason: str) -> bool:
    """Whether a skip reason says the path could not be opened at all."""
    return reason.startswith(_NOT_OPENED)


def _classify(path: str, explicit: bool, info: os.stat_result | None = None) -> str | None:
    """Why a file cannot be read, or None if it can. `info` is its lstat when the caller has it."""
    try:
        if info is None:
            info = os.stat(path) if explicit else os.lstat(path)
    except FileNotFoundError:
        return "broken symbolic link" if os.path.islink(path) else "no such file or directory"
    except OSError as exc:
        return f"cannot stat: {exc.strerror or exc}"
    if stat.S_ISLNK(info.st_mode):
        try:
            target = os.stat(path)
        except FileNotFoundError:
            return "broken symbolic link"
        except OSError as exc:  # a loop of links
            return f"cannot stat: {exc.strerror or exc}"
        return "symbolic link to a directory (not followed)" if stat.S_ISDIR(target.st_mode) else None
    if stat.S_ISFIFO(info.st_mode) and explicit:
        return None
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file (FIFO, device or socket)"
    if info.st_size == 0 and not explicit:  # a named file is read: /proc's files say size 0
        return "empty file"
    if not os.access(path, os.R_OK):
        return "permission denied"
    return None


def _walk(directory: str) -> Iterator[InputItem]:
    """Every file below `directory`, sorted, each directory's files before its subdirectories,
    without following symbolic links to directories. One `lstat` per file: a plog tree holds
    thousands, and the size it gives is kept for the engine."""
    pending = [directory]
    while pending:
        current = pending.pop()
        try:
            with os.scandir(current) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as exc:
            yield InputItem(current, False, f"cannot list the directory: {exc.strerror or exc}")
            continue
        subdirectories = []
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                subdirectories.append(entry.path)
            elif entry.is_symlink() and os.path.isdir(entry.path):
                yield InputItem(entry.path, False, "symbolic link to a directory (not followed)")
            else:
                yield _entry_item(entry)
        pending.extend(reversed(subdirectories))


def _entry_item(entry: os.DirEntry[str]) -> InputItem:
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return InputItem(entry.path, False, _classify(entry.path, explicit=False) or "")
    reason = _classify(entry.path, False, info)
    if stat.S_ISLNK(info.st_mode):
        return InputItem(entry.path, False, reason or "")
    return InputItem(entry.path, False, reason or "", info.st_size, (info.st_dev, info.st_ino))


def expand(paths: Sequence[str]) -> list[InputItem]:
    """The inputs named on the command line, directories walked, in a stable order, each with its
    identity. A file met twice (named and in a directory named, or through a link) is read once,
    by its own name rather than a link's (the name may carry the rank); the others are skipped,
    saying which input they repeat, or its findings would count twice."""
    items = [item._replace(identity=_identity(item)) for item in _named(paths)]
    kept: dict[tuple[int, int], InputItem] = {}
    for item in items:
        if item.identity is not None and (item.identity not in kept or _is_link(kept[item.identity])):
            kept[item.identity] = item
    return [
        item._replace(skip_reason=f"the same file as {kept[item.identity].label}")
        if item.identity is not None and kept[item.identity] is not item
        else item
        for item in items
    ]


def _is_link(item: InputItem) -> bool:
    return item.size < 0 and os.path.islink(item.path)


def _named(paths: Sequence[str]) -> Iterator[InputItem]:
    stdin_named = False
    for path in paths:
        if path == STDIN:
            yield InputItem(STDIN, True, "standard input named twice: read once" if stdin_named else "")
            stdin_named = True
        elif os.path.isdir(path):
            yield from _walk(path)
        else:
            yield InputItem(path, True, _classify(path, explicit=True) or "")


def _identity(item: InputItem) -> tuple[int, int] | None:
    """(device, inode) of a file to read; None for stdin and what is skipped anyway."""
    if item.skip_reason or item.is_stdin:
        return None
    if item.identity is not None:
        return item.identity
    try:
        info = os.stat(item.path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


GZIP, BZIP2, XZ, ZSTD = b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd"  # magic bytes
COMPRESSED = (GZIP, BZIP2, XZ, ZSTD)


def plain_text(path: str) -> bool:
    """Whether a file is scanned as it is on disk: not compressed, no NUL in its first bytes
    (so not UTF-16 and not binary either)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(SNIFF)
    except OSError:
        return False
    return b"\x00" not in head and not head.startswith(COMPRESSED)


# What reading a truncated or corrupt log raises; anything else is a bug and must surface.
READ_ERRORS: tuple[type[BaseException], ...] = (OSError, EOFError, zlib.error)


def _decompressor(stream: Any, head: bytes) -> tuple[BinaryIO | None, str, tuple[type[BaseException], ...]]:
    """Wrap `stream` by its magic bytes: (stream, compression name or skip reason, what reading it
    can raise). A decompressor is imported by the first input that needs one, not by every run."""
    if head.startswith(GZIP):
        import gzip

        return _Salvaging(gzip.GzipFile(fileobj=stream), READ_ERRORS), "gzip", READ_ERRORS
    if head.startswith(BZIP2):
        import bz2

        return _Salvaging(bz2.BZ2File(stream), READ_ERRORS), "bzip2", READ_ERRORS
    if head.startswith(XZ):
        import lzma

        errors = (*READ_ERRORS, lzma.LZMAError)
        return _Salvaging(lzma.LZMAFile(stream), errors), "xz", errors
    if head.startswith(ZSTD):
        try:
            import zstandard
        except ImportError:
            return None, "zstd-compressed (install the 'zstandard' package to read it)", READ_ERRORS
        errors = (*READ_ERRORS, zstandard.ZstdError)
        return _Salvaging(zstandard.ZstdDecompressor().stream_reader(stream), errors), "zstd", errors
    return stream, "", READ_ERRORS


class OpenedInput(NamedTuple):
    """An open input: the (decompressed) stream, the bytes already sniffed, notes, and what
    reading the stream can raise when the input is truncated or corrupt."""

    stream: BinaryIO
    first: bytes
    note: str
    closer: Any
    errors: tuple[type[BaseException], ...] = READ_ERRORS


def open_input(item: InputItem, stdin: BinaryIO | None = None) -> tuple[OpenedInput | None, str]:
    """Open an input for scanning; (None, reason) when it must be skipped."""
    raw: Any
    if item.is_stdin:
        if stdin is None:
            return None, "standard input is closed"
        raw = stdin
    else:
        try:
            raw = open(item.path, "rb")  # noqa: SIM115 - closed by the engine after the scan
        except OSError as exc:
            return None, f"cannot open: {exc.strerror or exc}"
    if not hasattr(raw, "peek"):
        raw = io.BufferedReader(raw)
    errors = READ_ERRORS
    try:
        head = raw.peek(8)[:8]
        stream, compression, errors = _decompressor(raw, head)
        if stream is None:
            raw.close()
            return None, compression
        first = stream.read(SNIFF)
        if b"\x00" in first and first.startswith((b"\xff\xfe", b"\xfe\xff")):
            utf16 = _Utf16AsUtf8(_Prefixed(first, stream))
            note = f"{compression}-compressed UTF-16 text, decoded" if compression else "UTF-16 text, decoded"
            return OpenedInput(utf16, utf16.read(SNIFF), note, raw, errors), ""
    except errors as exc:
        raw.close()
        return None, f"cannot read: {exc}"
    if item.is_stdin and not first:
        return None, EMPTY_STDIN
    if not first:
        raw.close()
        return (
            None,
            f"{compression}-compressed, but nothing could be decompressed" if compression else "empty file",
        )
    reason = _binary_reason(first, piped=item.is_stdin) or report_reason(item, first)
    if reason:
        raw.close()
        return None, reason
    notes = [f"{compression}-compressed"] if compression else []
    if first.startswith(b"\x00"):
        notes.append("starts with NUL bytes (a log truncated in place, as by logrotate's copytruncate)")
    return OpenedInput(stream, first, "; ".join(notes), raw, errors), ""


class _Prefixed(io.RawIOBase):
    """The bytes already sniffed, then the rest of the stream."""

    def __init__(self, first: bytes, rest: Any) -> None:
        self._first = first
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._first[: len(buffer)] if self._first else self._rest.read(len(buffer))
        self._first = self._first[len(data) :] if self._first else b""
        buffer[: len(data)] = data
        return len(data)


class _Salvaging(io.RawIOBase):
    """A decompressor read so that a truncated or corrupt file loses none of the bytes decompressed
    before the fault: they are returned first, and the error is raised by the next read. (One big
    `read` of a decompressor's own buffered reader drops all it gathered when the fault comes.)"""

    def __init__(self, stream: Any, errors: tuple[type[BaseException], ...]) -> None:
        self._stream = stream
        self._errors = errors
        self._error: BaseException | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._error is not None:
            raise self._error
        view = memoryview(buffer).cast("B")
        filled = 0
        try:
            while filled < len(view):
                data = self._stream.read1(len(view) - filled)
                if not data:
                    break
                view[filled : filled + len(data)] = data
                filled += len(data)
        except self._errors as exc:
            if not filled:
                raise
            self._error = exc
        return filled


class _Utf16AsUtf8:
    """A UTF-16 log (as Windows redirects write them), handed on as UTF-8 bytes. Each read decodes
    one read of the stream below, keeping what does not fit the caller's buffer for the next read
    (UTF-8 may take half as many bytes again as UTF-16). The stream below is read only when nothing
    decoded is left, so a fault it raises loses nothing decoded before it."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._decoder = codecs.getincrementaldecoder("utf-16")(errors="replace")
        self._pending = b""

    def read(self, size: int = SNIFF) -> bytes:
        while not self._pending:
            data = self._stream.read(size)
            self._pending = self._decoder.decode(data, final=not data).encode("utf-8", errors="replace")
            if not data:
                break
        data, self._pending = self._pending[:size], self._pending[size:]
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


# How each of ascend-doctor's own report formats begins, and what else the first bytes hold. A
# report an earlier run wrote into a log directory (a CI step's `-o logs/report.sarif`) is not a
# log: it quotes evidence lines and, in SARIF, every rule's help text, which would be diagnosed
# as a second failure. Each signature needs more than a first line a log could have: the text
# report's first line with its footer or a finding's confidence, the JSON reports' keys together.
REPORT_SIGNATURES: tuple[tuple[bytes, tuple[tuple[bytes, ...], ...]], ...] = (
    (b"Diagnosis: ", ((b"\nascend-doctor ",), (" · confidence ".encode(),))),
    # zh: with the full-width colon, and with the ASCII one of earlier versions
    ("诊断：".encode(), ((b"\nascend-doctor ",), (" · 置信度 ".encode(),))),
    ("诊断: ".encode(), ((b"\nascend-doctor ",), (" · 置信度 ".encode(),))),
    (b"## ascend-doctor: ", ((" · ascend-doctor ".encode(),),)),
    (
        b"{",
        ((b'"name": "ascend-doctor"', b'"schema_version": '), (b'"name": "ascend-doctor"', b'"$schema": ')),
    ),
    (b"[\n  {", ((b'"check_name": ', b'"fingerprint": '),)),  # GitLab Code Quality
    (b"<?xml", ((b'<testsuites name="ascend-doctor"',),)),  # JUnit
    (
        b"::",
        (
            (b"%0ACause: ",),
            ("%0A原因：".encode(),),
            ("%0A原因: ".encode(),),
            (b"::notice title=ascend-doctor::",),
        ),
    ),
)
# What a text report may carry besides its text: colours (`--color -o FILE`), and the fence it is
# written in under GitHub Actions.
_COLOUR = regex(rb"\x1b\[[0-9;]*m")
_FENCE = regex(rb"\A::stop-commands::\w+\n")


def report_reason(item: InputItem, first: bytes) -> str:
    """Why a file found in a directory, beginning with `first`, is skipped as an ascend-doctor
    report, or "". A file named on the command line is read whatever it holds."""
    if item.explicit:
        return ""
    head = first.lstrip()
    if head.startswith(b"::stop-commands::"):
        head = _FENCE.sub(b"", head, count=1)
    if head.startswith(b"\x1b"):  # only a coloured file pays for the copy: a plog tree has thousands
        head = _COLOUR.sub(b"", head)
    for start, alternatives in REPORT_SIGNATURES:
        if head.startswith(start) and any(all(mark in head for mark in marks) for marks in alternatives):
            return "an ascend-doctor report, not a log"
    return ""


def _binary_reason(first: bytes, piped: bool = False) -> str:
    if piped:  # a job's output piped in is a log by intent: one stray NUL must not cost the diagnosis
        return ""
    if first.startswith(b"PK\x03\x04"):
        return "a zip archive: extract it and diagnose the directory"
    if first[257:262] == b"ustar":
        return "a tar archive: extract it and diagnose the directory"
    # NUL bytes before the text are the hole a log truncated in place leaves (logrotate's
    # copytruncate while the job writes on): that file is a log.
    return "binary file (contains NUL bytes)" if b"\x00" in first.lstrip(b"\x00") else ""
