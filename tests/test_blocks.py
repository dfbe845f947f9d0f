"""A line is matched with what the file holds around it wherever the reads cut the file: the rest
of a message wrapped onto the next line, and the time and the rank in the lines before it."""

from __future__ import annotations

import random
from io import BytesIO
from typing import Any

import pytest

from ascend_doctor import engine
from ascend_doctor.match import matcher, parts, scanner
from ascend_doctor.match.matcher import Matcher
from ascend_doctor.read import events
from ascend_doctor.read.sources import InputItem
from ascend_doctor.rulebase.load import load_rulebase

READ = 4096
LIBGOMP = (
    "ImportError: /usr/lib/aarch64-linux-gnu/libgomp.so.1: cannot allocate",
    " memory in static TLS block",
)


@pytest.fixture(scope="module")
def rules_matcher() -> Matcher:
    return Matcher(load_rulebase().rules, "python")


@pytest.fixture
def small_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scanner, "CHUNK", READ)
    monkeypatch.setattr(parts, "CHUNK", READ)


def _filler(size: int) -> bytes:
    """Healthy training lines, `size` bytes in all."""
    lines = b"".join(b"step %06d loss 7.1234 lr 1.0e-04\n" % number for number in range(size // 34 + 1))
    return lines[: size - 1] + b"\n" if size else b""


def _scan(found_by: Matcher, data: bytes) -> list[Any]:
    return scanner.StreamScanner(found_by, "train.log", 0).scan(BytesIO(data)).matches


@pytest.mark.parametrize("shift", range(-700, 400, 23))
def test_a_message_wrapped_where_a_read_ends_is_still_read_whole(
    rules_matcher: Matcher, small_reads: None, shift: int
) -> None:
    """The libgomp error says what it is only with its second line; the read ends in either."""
    head = _filler(READ + shift - len(LIBGOMP[0]))
    data = head + "\n".join(LIBGOMP).encode() + b"\n" + _filler(3000)
    found = [(m.rule_id, m.evidence.line) for m in _scan(rules_matcher, data)]
    assert ("env.libgomp-static-tls", head.count(b"\n") + 1) in found


@pytest.mark.parametrize("shift", range(-300, 300, 17))
def test_a_line_after_a_read_end_keeps_the_time_and_rank_of_the_lines_before(
    rules_matcher: Matcher, small_reads: None, shift: int
) -> None:
    """CANN's error line names only its process: its rank and time are in the lines before."""
    before = (
        b"[ERROR] 2024-12-04 15:32:50.101 (PID:48203, Device:3, RankID:3) ERR01005 OPS internal error\n"
        b"[ERROR] 2024-12-04 15:32:51.000 step failed\n"
    )
    head = _filler(READ + shift - len(before)) + before
    data = head + b"EZ9999: Inner Error! [PID: 48203] AI Core kernel execution failed\n" + _filler(500)
    hits = [m.evidence for m in _scan(rules_matcher, data) if m.evidence.line == head.count(b"\n") + 1]
    assert hits  # each rule matching the line (EZ9999's own and the code catalogue's) has them
    assert {(hit.rank, hit.timestamp) for hit in hits} == {
        (3, events.timestamp_of("2024-12-04 15:32:51.000"))
    }


def _log(seed: int) -> bytes:
    """Lines of every length, wrapped messages, colour codes, and lines longer than a segment."""
    rng = random.Random(seed)
    lines = []
    for _ in range(900):
        shape = rng.randrange(8)
        if shape == 0:
            lines.append(b"x" * rng.randrange(scanner.MAX_CONTINUATION - 20, scanner.MAX_CONTINUATION + 20))
        elif shape == 1:
            lines.append(b"y" * rng.randrange(events.MAX_SEGMENT - 10, events.MAX_SEGMENT + 3 * READ))
        elif shape == 2:
            lines.extend(part.encode() for part in LIBGOMP)
        elif shape == 3:  # colour codes, a link, a stray escape: none is shown, none holds a line end
            codes = [b"\x1b[31m", b"\x1b[0m", b"\x1b]8;;https://example.com/run/7\x07", b"\x1bq"]
            words = [b"2024-12-04 15:32:50", b"EL0004: Failed", b"to allocate memory", b"x" * 600]
            lines.append(b" ".join(rng.choice(codes) + word for word in rng.sample(words, 4)))
        else:
            lines.append(_filler(rng.randrange(1, 300)).rstrip(b"\n").replace(b"\n", b" "))
    return b"\n".join(lines) + b"\n"


def _lines_matched(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """Every line handed to the matcher, with its number, neighbours and look-back."""
    seen: list[tuple[Any, ...]] = []
    monkeypatch.setattr(scanner.StreamScanner, "_line", lambda _self, *args: seen.append(args))
    return seen


@pytest.mark.parametrize("seed", range(3))
def test_every_line_is_matched_alike_whatever_the_size_of_the_reads(
    rules_matcher: Matcher, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    monkeypatch.setattr(matcher, "FAST", False)  # every line is handed to the matcher
    data = _log(seed)
    seen = _lines_matched(monkeypatch)
    matched = []
    for read in (READ, 64 * 1024, 1024 * 1024):
        monkeypatch.setattr(scanner, "CHUNK", read)
        seen.clear()
        result = scanner.StreamScanner(rules_matcher, "train.log", 0).scan(BytesIO(data))
        matched.append((list(seen), result.lines, result.size))
    assert matched[0][0], "lines were matched"
    assert matched[0] == matched[1] == matched[2]


def test_parts_match_every_line_as_the_whole_scan_does(
    tmp_path: Any, rules_matcher: Matcher, monkeypatch: pytest.MonkeyPatch, small_reads: None
) -> None:
    monkeypatch.setattr(matcher, "FAST", False)
    monkeypatch.setattr(parts, "TAIL", 1024)  # some read ends have no line end in their tail
    path = tmp_path / "train.log"
    path.write_bytes(_log(7))
    plan = parts.plan(str(path), path.stat().st_size, part_bytes=8 * READ)
    assert len(plan) > 5
    seen = _lines_matched(monkeypatch)
    item = InputItem(str(path), True)
    whole = engine._scan_part(rules_matcher, item, 0, parts.Part(0, 0, 0, -1))
    whole_lines = list(seen)
    seen.clear()
    results = []
    for part in plan:
        lines_before = sum(result.lines for result in results)
        count = len(seen)
        results.append(engine._scan_part(rules_matcher, item, 0, part))
        seen[count:] = [(text, number + lines_before, *rest) for text, number, *rest in seen[count:]]
    assert seen == whole_lines
    record, _ = engine._joined(item, 0, results)
    assert isinstance(whole, scanner.ScanResult)
    assert (
        (record.lines, record.size) == (whole.lines, whole.size) == (whole_lines[-1][1], path.stat().st_size)
    )


def _coded_log() -> bytes:
    """Colour codes and links astride the ends of what a neighbour or a look-back takes."""
    link = b"\x1b]8;;https://example.com/" + b"p" * 300 + b"\x07the run\x1b]8;;\x07"
    edge = b"x" * (scanner.MAX_CONTINUATION - 4) + b"\x1b[31m" + b"y" * 100
    lines = [(link, edge, b"step %d loss 7.1" % number)[number % 3] for number in range(400)]
    return b"\n".join(line + b" " * (number % 11) for number, line in enumerate(lines)) + b"\n"


@pytest.mark.parametrize("read", range(READ, READ + 640, 16))
def test_a_colour_code_is_not_cut_where_a_neighbour_or_a_look_back_ends(
    rules_matcher: Matcher, monkeypatch: pytest.MonkeyPatch, read: int
) -> None:
    monkeypatch.setattr(matcher, "FAST", False)
    seen = _lines_matched(monkeypatch)
    matched = []
    for size in (read, 1024 * 1024):
        monkeypatch.setattr(scanner, "CHUNK", size)
        seen.clear()
        scanner.StreamScanner(rules_matcher, "train.log", 0).scan(BytesIO(_coded_log()))
        matched.append(list(seen))
    assert matched[0] == matched[1]


def test_a_wrapped_message_is_one_message_in_parts_and_whole(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, small_reads: None
) -> None:
    """Both of its lines hold the libgomp error's words, so both match; it is counted once, also
    where a part ends between them."""
    wrapped = b"ImportError: /usr/lib/libgomp.so.1: cannot allocate\n memory in static TLS block\n"
    messages = 400
    path = tmp_path / "train.log"
    path.write_bytes(b"".join(_filler(97 + 31 * (number % 13)) + wrapped for number in range(messages)))
    monkeypatch.setattr(engine, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(parts, "PART_BYTES", 8 * READ)
    assert len(parts.plan(str(path), path.stat().st_size, workers=2)) > 4
    for jobs in (1, 2):
        report = engine.diagnose([str(path)], load_rulebase(), engine.ScanOptions(engine="python", jobs=jobs))
        (finding,) = [f for f in report.findings if f.rule.id == "env.libgomp-static-tls"]
        assert finding.count == messages, jobs


@pytest.mark.parametrize("line_length", [1, 33, 63, 64, 65, 120, 5000])
def test_a_finding_is_on_its_line_however_long_the_lines_before_it(
    rules_matcher: Matcher, line_length: int
) -> None:
    """Line ends are counted by deleting them where lines are of usual length and byte by byte
    where they are short (blank lines): a run of either kind across reads of the real size, then
    lines of the other kind, still give the line the error is on."""
    uniform = b"".join(
        b"%0*d\n" % (line_length - 1, number) if line_length > 1 else b"\n"
        for number in range(3_000_000 // line_length)
    )
    mixed = _filler(40_000) + b"\n" * 5_000 + _filler(40_000)
    head = uniform + mixed + uniform[: len(uniform) // 3]
    data = head + "\n".join(LIBGOMP).encode() + b"\n" + _filler(3000)
    found = [(m.rule_id, m.evidence.line) for m in _scan(rules_matcher, data)]
    assert ("env.libgomp-static-tls", head.count(b"\n") + 1) in found
