"""The `collect` archive: report, log lines around the failure, environment and a manifest, all
redacted before a byte is written.

Lines of a log are kept from `window` seconds before the latest run's first error to `window`
seconds after its last (a line with no time of its own, a traceback's, goes with the last time
before it; a log with no times at all is kept whole). Logs that hold evidence of the top findings
come first; once the size cap is reached a log is cut to its last lines, then left out. The
manifest says, for each log, which lines were kept and what was left out and why.
"""

from __future__ import annotations

import io
import json
import os
import tarfile
import time
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from ascend_doctor import __version__
from ascend_doctor.cluster.redact import Redactor
from ascend_doctor.cluster.wire import iso_time
from ascend_doctor.model import Report, Severity
from ascend_doctor.ranking import earlier_runs
from ascend_doctor.read.events import decode, timestamp_of
from ascend_doctor.read.sources import InputItem, open_input

ROOT = "ascend-doctor-bundle"
BLOCK = 1024 * 1024


class Limits(NamedTuple):
    """How much of the logs to take: seconds around the failure, and bytes in all."""

    window: float = 600.0
    max_bytes: int = 50 * 1024 * 1024


class Excerpt(NamedTuple):
    """The lines of one log that a bundle keeps (redacted), and which ones they were."""

    lines: list[str]
    numbers: tuple[int, int]  # first and last line kept, 0 when none
    total: int
    timed: bool


def failure_span(report: Report) -> tuple[float, float] | None:
    """The first and last error time of the latest run, or None when no error line has a time."""
    errors = {rule.id for rule in report.rules if rule.severity is Severity.ERROR}
    earlier = earlier_runs(report.matches, report.rules)
    stale = earlier.inputs if earlier else frozenset()
    times = [
        m.evidence.timestamp
        for m in report.matches
        if m.rule_id in errors and m.evidence.timestamp is not None and m.input_index not in stale
    ]
    return (min(times), max(times)) if times else None


def _lines(first: bytes, stream: Any) -> Iterator[bytes]:
    """A log's lines (split at `\\n` only, as line numbers count them), read a block at a time."""
    pending = first
    while True:
        *whole, pending = pending.split(b"\n")
        yield from whole
        block = stream.read(BLOCK)
        if not block:
            break
        pending += block
    if pending:
        yield pending


def excerpt(item: InputItem, span: tuple[float, float] | None, limits: Limits, redact: Redactor) -> Excerpt:
    """The log's lines inside the window around `span` (all of them without a span or times), at
    most `limits.max_bytes` of them: the last ones."""
    opened, reason = open_input(item)
    if opened is None:
        raise OSError(reason)
    low, high = (span[0] - limits.window, span[1] + limits.window) if span else (float("-inf"), float("inf"))
    kept: deque[tuple[int, str]] = deque()
    size = number = 0
    leading: list[tuple[int, str]] = []  # lines before the first time: they take that time
    stamp: float | None = None
    try:
        for number, raw in enumerate(_lines(opened.first, opened.stream), start=1):
            line = decode(raw.rstrip(b"\r"))
            stamp = timestamp_of(line) or stamp
            if stamp is None:
                leading.append((number, line))
                continue
            chosen = [*leading, (number, line)] if low <= stamp <= high else []
            leading = []
            for entry in chosen:
                kept.append(entry)
                size += len(entry[1]) + 1
            while size > limits.max_bytes and len(kept) > 1:
                size -= len(kept.popleft()[1]) + 1
    finally:
        opened.closer.close()
    kept.extend(leading)  # no time at all in the log: it is kept (and cut by the size cap later)
    numbers = (kept[0][0], kept[-1][0]) if kept else (0, 0)
    return Excerpt([redact(line) for _, line in kept], numbers, number, stamp is not None)


def _member(path: str, redact: Redactor) -> str:
    parts = [part for part in redact(path).replace("\\", "/").split("/") if part not in ("", ".", "..")]
    return "logs/" + "/".join(parts)


def _ordered(report: Report, items: Sequence[InputItem]) -> list[int]:
    """Inputs to bundle, those with the top findings' evidence first."""
    first = [path for finding in report.findings for path in finding.paths]
    rank = {path: position for position, path in reversed(list(enumerate(first)))}
    readable = [index for index, record in enumerate(report.inputs) if not record.skipped]
    return sorted(readable, key=lambda index: (rank.get(report.inputs[index].path, len(rank)), index))


def _log_entries(
    report: Report, items: Sequence[InputItem], limits: Limits, redact: Redactor
) -> tuple[list[tuple[str, bytes]], list[dict[str, Any]]]:
    """The logs' archive members, and the manifest's account of each log."""
    span = failure_span(report)
    room = limits.max_bytes
    members, accounts = [], []
    for index in _ordered(report, items):
        source = redact(report.inputs[index].path)
        try:
            cut = excerpt(items[index], span, limits, redact)
        except OSError as exc:
            accounts.append({"source": source, "kept": False, "why": f"cannot read it now: {exc}"})
            continue
        body = ("\n".join(cut.lines) + "\n").encode("utf-8") if cut.lines else b""
        account: dict[str, Any] = {"source": source, "lines": cut.total, "kept_lines": list(cut.numbers)}
        if not body:
            accounts.append({**account, "kept": False, "why": "no line inside the time window"})
            continue
        if room <= 0:
            accounts.append({**account, "kept": False, "why": "the size cap was reached"})
            continue
        notes = [] if cut.timed or span is None else ["the log has no times: kept whole"]
        if len(cut.lines) < cut.total and cut.timed:
            notes.append(f"{cut.total - len(cut.lines)} line(s) outside the time window left out")
        if len(body) > room:
            notes.append(f"cut to its last {room} of {len(body)} bytes by the size cap")
            body = body[-room:]
        room -= len(body)
        member = _member(report.inputs[index].path, redact)
        members.append((member, body))
        accounts.append({**account, "kept": True, "member": member, "bytes": len(body), "notes": notes})
    return members, accounts


def manifest(
    report: Report, limits: Limits, redact: Redactor, accounts: list[dict[str, Any]]
) -> dict[str, Any]:
    span = failure_span(report)
    return {
        "tool": {"name": "ascend-doctor", "version": __version__},
        "node": redact(report.node) or None,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "failure": {"first_error": iso_time(span[0]), "last_error": iso_time(span[1])} if span else None,
        "window_seconds": limits.window,
        "max_bytes": limits.max_bytes,
        "redacted": {"hosts": redact.hosts, **dict(redact.replaced)},
        "logs": accounts,
        "skipped_inputs": [
            {"source": redact(record.path), "why": redact(record.reason)}
            for record in report.inputs
            if record.skipped
        ],
    }


def _redacted(value: Any, redact: Redactor) -> Any:
    """Every string in a JSON-able value redacted; a mapping's values as `key=value`, so that a
    variable named like a secret (`HF_TOKEN`) loses its value whatever the value looks like."""
    if isinstance(value, dict):
        return {
            key: redact(f"{key}={item}").partition("=")[2]
            if isinstance(item, str)
            else _redacted(item, redact)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_redacted(item, redact) for item in value]
    return redact(value) if isinstance(value, str) else value


def write_bundle(
    path: str,
    report: Report,
    items: Sequence[InputItem],
    documents: dict[str, str],
    environment: dict[str, Any],
    limits: Limits,
    redact: Redactor,
) -> dict[str, Any]:
    """Write the archive (to a temporary name, then renamed: never half a bundle). `documents`: the
    rendered report files, already redacted; `environment` is redacted here. Returns the manifest."""
    members, accounts = _log_entries(report, items, limits, redact)
    environment_text = json.dumps(_redacted(environment, redact), ensure_ascii=False, indent=2)
    record = manifest(report, limits, redact, accounts)
    entries: Iterable[tuple[str, bytes]] = [
        ("MANIFEST.json", json.dumps(record, ensure_ascii=False, indent=2).encode("utf-8")),
        *((name, text.encode("utf-8")) for name, text in documents.items()),
        ("environment.json", environment_text.encode("utf-8")),
        *members,
    ]
    partial = f"{path}.partial"
    with tarfile.open(partial, "w:gz") as archive:
        for name, data in entries:
            info = tarfile.TarInfo(f"{ROOT}/{name}")
            info.size, info.mtime, info.mode = len(data), int(time.time()), 0o644
            archive.addfile(info, io.BytesIO(data))
    os.replace(partial, path)
    return record
