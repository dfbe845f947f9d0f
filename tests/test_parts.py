"""A big plain file in parts: where parts start and end, and what a part that fails leaves."""

from __future__ import annotations

from pathlib import Path

import pytest

from ascend_doctor import engine
from ascend_doctor.match import parts, scanner
from ascend_doctor.match.matcher import Matcher
from ascend_doctor.read.sources import InputItem, expand
from ascend_doctor.rulebase.load import load_rulebase

READ = 64 * 1024


@pytest.fixture
def small_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """64 KiB reads: a small log then has many blocks and many parts."""
    monkeypatch.setattr(scanner, "CHUNK", READ)
    monkeypatch.setattr(parts, "CHUNK", READ)


def _scan_parts(item: InputItem, plan: list[parts.Part]) -> list[object]:
    matcher = Matcher(load_rulebase().rules, "python")
    return [engine._scan_part(matcher, item, 0, part) for part in plan]


def _log(tmp_path: Path) -> Path:
    """Lines of every length, a few longer than a read, so cuts fall everywhere."""
    lines = [("x" * ((index * 7919) % 3000)).encode() for index in range(600)]
    lines[100] = b"y" * (3 * READ)  # a chunk with no line end: no part may start there
    path = tmp_path / "train.log"
    path.write_bytes(b"\n".join(lines) + b"\nEL0004: Failed to allocate memory\n")
    return path


def test_compressed_binary_and_small_files_are_not_split(tmp_path: Path) -> None:
    gz = tmp_path / "train.log.gz"
    gz.write_bytes(b"\x1f\x8b" + b"x\n" * 100_000)
    binary = tmp_path / "core"
    binary.write_bytes(b"\x00" * 200_000)
    for path in (gz, binary):
        assert parts.plan(str(path), path.stat().st_size, part_bytes=READ) == []
    small = tmp_path / "small.log"
    small.write_bytes(b"line\n" * 20_000)
    assert parts.plan(str(small), small.stat().st_size, part_bytes=10**6) == []
    assert [item.path for item in expand([str(tmp_path)])] == [str(binary), str(small), str(gz)]


def test_a_part_that_cannot_be_read_ends_the_input_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_reads: None
) -> None:
    """The parts before it keep their findings; the input says where reading stopped and why."""
    path = _log(tmp_path)
    path.write_bytes(b"EL0004: Failed to allocate memory\n" + path.read_bytes())
    plan = parts.plan(str(path), path.stat().st_size, part_bytes=READ)
    real_open = parts.open_part

    def failing(name: str, part: parts.Part) -> object:
        if part.number >= 2:
            raise PermissionError(13, "Permission denied")
        return real_open(name, part)

    monkeypatch.setattr(engine, "open_part", failing)
    item = InputItem(str(path), True)
    record, matches = engine._joined(item, 0, _scan_parts(item, plan))  # type: ignore[arg-type]
    assert record.status == "read"
    assert record.notes == (f"stopped reading after {plan[2].start} bytes: cannot open: Permission denied",)
    assert {match.evidence.line for match in matches} == {1}  # EL0004's rule and the code catalogue's
    monkeypatch.setattr(engine, "open_part", lambda name, part: failing(name, part._replace(number=2)))
    record, matches = engine._joined(item, 0, _scan_parts(item, plan))  # type: ignore[arg-type]
    assert (record.status, record.reason, matches) == ("skipped", "cannot open: Permission denied", [])


def test_a_read_error_inside_a_part_ends_the_input_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_reads: None
) -> None:
    path = _log(tmp_path)
    plan = parts.plan(str(path), path.stat().st_size, part_bytes=READ)

    def broken_disk(self: object, buffer: object) -> int:
        raise OSError(5, "Input/output error")

    item = InputItem(str(path), True)
    results = _scan_parts(item, plan[:3])
    monkeypatch.setattr(parts._Bounded, "readinto", broken_disk)
    results += _scan_parts(item, plan[3:4])
    record, _ = engine._joined(item, 0, results)  # type: ignore[arg-type]
    assert record.notes == (f"stopped reading after {plan[3].start} bytes: cannot read: Input/output error",)


def test_parts_are_sized_for_the_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Parts come in a multiple of the workers, so none waits on a last odd part."""
    monkeypatch.setattr(parts, "PART_BYTES", 4 * 1024 * 1024)
    path = tmp_path / "train.log"
    path.write_bytes(b"step 1: loss 2.0, lr 1e-4, tokens/s 4096\n" * 450_000)  # 18 MB: 4.5 full parts
    size = path.stat().st_size
    assert len(parts.plan(str(path), size, workers=2)) == 6
    assert len(parts.plan(str(path), size, workers=3)) == 6
    assert len(parts.plan(str(path), size, workers=64)) == 18  # parts no smaller than 1 MB


class RecordingBar:
    """A progress bar that remembers what the engine told it."""

    def __init__(self) -> None:
        self.totals: list[int | None] = []
        self.counts: list[int] = []

    def sized(self, total: int | None) -> None:
        self.totals.append(total)

    def __call__(self, count: int) -> None:
        self.counts.append(count)


def test_progress_counts_the_parts_read_when_one_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the worker pool: the bar gets the bytes of each part read, 0 for the failed one."""
    monkeypatch.setattr(engine, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(parts, "PART_BYTES", 4 * 1024 * 1024)
    path = tmp_path / "train.log"
    path.write_bytes(b"step 1: loss 2.0, lr 1e-4, tokens/s 4096\n" * 450_000)
    real_open = parts.open_part

    def failing(name: str, part: parts.Part) -> object:
        if part.number == 3:
            raise PermissionError(13, "Permission denied")
        return real_open(name, part)

    monkeypatch.setattr(engine, "open_part", failing)
    bar = RecordingBar()
    report = engine.diagnose([str(path)], load_rulebase(), engine.ScanOptions(jobs=2), progress=bar)
    seen = bar.counts
    assert bar.totals == [path.stat().st_size]
    (record,) = report.inputs
    assert record.notes == (f"stopped reading after {record.size} bytes: cannot open: Permission denied",)
    assert len(seen) == 6 and seen.count(0) == 1
    failed = parts.plan(str(path), path.stat().st_size, workers=2)[3]
    assert sum(seen) == path.stat().st_size - (failed.end - failed.start)


def test_a_part_that_starts_like_a_plog_keeps_the_tail_of_a_training_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_reads: None
) -> None:
    """Whether an input keeps its last bytes (for the exception it died of) is its file's start's
    decision: a later part whose first line looks like a plog line must not drop them."""
    plog_line = b"[ERROR] RUNTIME(2771,python):2024-06-11-10:27:58.775.002 [engine.cc:12] retrying\n"
    path = tmp_path / "train.log"
    path.write_bytes(
        b"step 1 loss 2.0\n"
        + plog_line * 6000
        + b'Traceback (most recent call last):\n  File "/work/train.py", line 88, in <module>\n'
        + b"KeyError: 'outdoor_scene'\n"
    )
    rulebase = load_rulebase()
    whole = engine.diagnose([str(path)], rulebase, engine.ScanOptions(jobs=1))
    monkeypatch.setattr(engine, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(parts, "PART_BYTES", READ)
    split = engine.diagnose([str(path)], rulebase, engine.ScanOptions(jobs=2))
    assert [raised.name for raised in whole.inputs[0].raised] == ["KeyError"]
    assert split.inputs[0].raised == whole.inputs[0].raised
