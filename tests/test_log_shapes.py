"""Messy real-world shapes of a log are diagnosed exactly like the clean log."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import diagnose_json

CLEAN = [
    "2024-12-04 15:32:50,101 INFO deepspeed launcher: world size 8",
    "step 1 loss 7.3412",
    "Traceback (most recent call last):",
    '  File "train.py", line 88, in <module>',
    "    loss.backward()",
    "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 3; 60.00 GiB total capacity)",
    "step 2 loss 7.1",
    "ImportError: /usr/lib/aarch64-linux-gnu/libgomp.so.1: cannot allocate memory in static TLS block",
    "done",
]


def findings(report: dict) -> list[tuple[str, list[int], list[str]]]:
    """What a user compares: rule ids in order, with every evidence line number and text."""
    return [
        (f["rule_id"], [e["line"] for e in f["evidence"]], [e["text"] for e in f["evidence"]])
        for f in report["findings"]
    ]


def diagnose_bytes(tmp_path: Path, data: bytes, name: str = "train.log") -> dict:
    path = tmp_path / name
    path.write_bytes(data)
    report, _ = diagnose_json(str(path))
    return report


@pytest.fixture
def expected(tmp_path: Path) -> list:
    report = diagnose_bytes(tmp_path, ("\n".join(CLEAN) + "\n").encode(), "clean.log")
    assert len(report["findings"]) >= 2, "the clean log must show two causes"
    return findings(report)


def lines_joined(transform: Callable[[str], str], end: str = "\n") -> bytes:
    return "".join(transform(line) + end for line in CLEAN).encode()


SHAPES: dict[str, Callable[[], bytes]] = {
    "ansi colours": lambda: lines_joined(lambda s: f"\x1b[1;31m{s}\x1b[0m\x1b[K"),
    "[rank3]: prefix": lambda: lines_joined(lambda s: f"[rank3]: {s}"),
    "[rank 3]: prefix": lambda: lines_joined(lambda s: f"[rank 3]: {s}"),
    "rank3: prefix": lambda: lines_joined(lambda s: f"rank3: {s}"),
    "[default3]: prefix": lambda: lines_joined(lambda s: f"[default3]:{s}"),
    "vllm worker prefix": lambda: lines_joined(
        lambda s: f"(VllmWorkerProcess pid=4242) ERROR 12-04 15:32:53 [multiproc_worker_utils.py:120] {s}"
    ),
    "CRLF": lambda: lines_joined(lambda s: s, end="\r\n"),
    "tqdm progress in the line": lambda: lines_joined(lambda s: f" 45%|████▌     | 9/20 [00:03<00:04]\r{s}"),
    "UTF-8 BOM": lambda: b"\xef\xbb\xbf" + lines_joined(lambda s: s),
    "no final newline": lambda: lines_joined(lambda s: s).rstrip(b"\n"),
    "terminal titles": lambda: lines_joined(lambda s: f"\x1b]0;rank 3: train.py\x07{s}"),
    # A title cut off before its end (BEL) must not swallow the lines up to the next BEL.
    "unterminated terminal title": lambda: b"\x1b]0;train.py " + lines_joined(lambda s: s) + b"\x07",
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_shape_gives_the_clean_diagnosis(tmp_path: Path, expected: list, shape: str) -> None:
    assert findings(diagnose_bytes(tmp_path, SHAPES[shape]())) == expected


def test_rank_prefix_sets_the_evidence_rank(tmp_path: Path) -> None:
    report = diagnose_bytes(tmp_path, SHAPES["[rank 3]: prefix"]())
    assert all(e["rank"] == 3 for f in report["findings"] for e in f["evidence"])


def test_gbk_chinese_log(tmp_path: Path, expected: list) -> None:
    text = "\n".join(["训练开始：加载数据集", *CLEAN[:5], "显存不足", *CLEAN[5:]]) + "\n"
    report = diagnose_bytes(tmp_path, text.encode("gb18030"))
    shifted = [(rule, [n + 1 if n < 6 else n + 2 for n in lines], texts) for rule, lines, texts in expected]
    assert findings(report) == shifted


def test_mixed_utf8_and_gbk_lines_are_all_decoded(tmp_path: Path) -> None:
    data = "日志 UTF-8\n".encode() + "日志 GBK\n".encode("gbk") + (CLEAN[5] + "\n").encode()
    report = diagnose_bytes(tmp_path, data)
    assert report["findings"][0]["evidence"][0]["line"] == 3


def test_invalid_bytes_never_crash(tmp_path: Path) -> None:
    data = b"\xff\xfe\xfa garbage \xc3\x28\n" + (CLEAN[5] + "\n").encode()
    report = diagnose_bytes(tmp_path, data)
    assert report["findings"][0]["evidence"][0]["line"] == 2


def test_traceback_escaped_into_one_json_line(tmp_path: Path) -> None:
    record = {"time": "2024-12-04T15:32:53", "level": "ERROR", "message": "\n".join(CLEAN[2:8])}
    data = b"starting\n" + json.dumps(record).encode() + b"\nbye\n"
    report = diagnose_bytes(tmp_path, data)
    rules = {f["rule_id"] for f in report["findings"]}
    assert {rule for rule, _, _ in findings(diagnose_bytes(tmp_path, lines_joined(lambda s: s)))} == rules
    for finding in report["findings"]:
        evidence = finding["evidence"][0]
        assert evidence["line"] == 2
        assert "\\n" not in evidence["text"] and not evidence["text"].startswith("{")


@pytest.mark.parametrize("width", [60, 69])  # at 69, both lines of the libgomp error hold its words
def test_message_hard_wrapped_across_lines(tmp_path: Path, expected: list, width: int) -> None:
    """Each wrapped message is found once, on one of its two lines."""
    wrapped = []
    origin = {}  # wrapped line number: clean line number
    for number, line in enumerate(CLEAN, start=1):
        for piece in [line[:width], line[width:]] if len(line) > 80 else [line]:
            wrapped.append(piece)
            origin[len(wrapped)] = number
    report = diagnose_bytes(tmp_path, ("\n".join(wrapped) + "\n").encode())
    found = [(rule, [origin[line] for line in lines]) for rule, lines, _ in findings(report)]
    assert found == [(rule, lines) for rule, lines, _ in expected]


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("Stream synchronize failed, error code is\n507035\n", 1),  # the words' line joins the next
        ("Stream synchronize failed, error code is 507035\n", 1),
        ("rtStreamSynchronize failed, ret: 507035\n", 1),
    ],
    ids=["wrapped after its words", "whole", "after ret"],
)
def test_a_code_after_its_words_is_found_where_they_are(tmp_path: Path, text: str, line: int) -> None:
    padding = "".join(f"step {step}: loss 2.{step}\n" for step in range(2000))  # past the small-log path
    report = diagnose_bytes(tmp_path, (padding + text).encode())
    found = {rule: lines for rule, lines, _ in findings(report)}
    assert found["runtime.vector-core-exception-507035"] == [2000 + line]


@pytest.mark.parametrize(
    ("name", "compress"),
    [("train.log.gz", gzip.compress), ("train.log.bz2", bz2.compress), ("train.log.xz", lzma.compress)],
)
def test_compressed_logs_by_content(tmp_path: Path, expected: list, name: str, compress) -> None:
    data = compress(lines_joined(lambda s: s))
    assert findings(diagnose_bytes(tmp_path, data, name)) == expected
    assert findings(diagnose_bytes(tmp_path, data, "renamed.txt")) == expected


def test_corrupt_gzip_is_reported_not_a_traceback(tmp_path: Path) -> None:
    data = gzip.compress(lines_joined(lambda s: s))[:40]
    path = tmp_path / "cut.log.gz"
    path.write_bytes(data)
    good = tmp_path / "good.log"
    good.write_text(CLEAN[5] + "\n")
    report, result = diagnose_json(str(path), str(good))
    assert "Traceback" not in result.stderr
    record = next(i for i in report["inputs"] if i["path"] == str(path))
    assert record.get("notes") or record["status"] == "skipped"
    assert report["findings"]


def _partial(compressed: bytes, name: str) -> bytes:
    """What a decompressor makes of a cut-off file, read on its own: what `zcat` would show."""
    decompressor = {
        "gz": lambda: zlib.decompressobj(31),
        "bz2": bz2.BZ2Decompressor,
        "xz": lzma.LZMADecompressor,
    }[name.rsplit(".", 1)[1]]()
    return decompressor.decompress(compressed)


@pytest.mark.parametrize(
    ("name", "compress"),
    [
        ("cut.log.gz", gzip.compress),
        ("cut.log.bz2", lambda data: bz2.compress(data, compresslevel=1)),
        ("cut.log.xz", lzma.compress),
    ],
)
def test_a_cut_off_compressed_log_is_read_up_to_the_cut(tmp_path: Path, name: str, compress) -> None:
    """A log cut short (a killed job, a rotation) is diagnosed on all it still holds, and says so."""
    noise = [
        f"step {i} loss {i * 0.37 % 7:.4f} tokens/s {i * 7919 % 104729} rank {i % 8}" for i in range(40_000)
    ]
    lines = [*noise[:2000], CLEAN[5], *noise[2000:]]
    compressed = compress(("\n".join(lines) + "\n").encode())
    cut = compressed[: len(compressed) * 3 // 4]
    readable = _partial(cut, name)
    assert CLEAN[5].encode() in readable and len(readable) > 8192
    report = diagnose_bytes(tmp_path, cut, name)
    assert report["findings"][0]["category"] == "device_out_of_memory"
    assert report["findings"][0]["evidence"][0]["line"] == 2001
    record = report["inputs"][0]
    assert record["lines"] == readable.count(b"\n") + (not readable.endswith(b"\n"))
    assert any(
        note.startswith(f"stopped reading early, at line {record['lines']}:") for note in record["notes"]
    )


def test_huge_single_line_then_the_error_is_still_found(tmp_path: Path) -> None:
    path = tmp_path / "huge.log"
    with path.open("wb") as handle:
        handle.write(b"tensor([" + b"0.1234, " * (4 * 1024 * 1024) + b"])\n")
        handle.write((CLEAN[5] + "\n").encode())
    report, _result = diagnose_json(str(path))
    top = report["findings"][0]
    assert top["category"] == "device_out_of_memory"
    assert top["evidence"][0]["line"] == 2


def test_error_inside_a_huge_line_is_found_in_a_window(tmp_path: Path) -> None:
    path = tmp_path / "huge.log"
    filler = b"x" * (3 * 1024 * 1024)
    path.write_bytes(filler + b" " + CLEAN[5].encode() + b" " + filler + b"\n")
    report, _result = diagnose_json(str(path))
    assert report["findings"][0]["category"] == "device_out_of_memory"
    assert report["findings"][0]["evidence"][0]["line"] == 1
    assert len(report["findings"][0]["evidence"][0]["text"]) <= 1000
    assert "NPU out of memory" in report["findings"][0]["evidence"][0]["text"]
    assert report["inputs"][0]["notes"], "matching a very long line only in windows must be said"


@pytest.mark.parametrize(
    ("before", "after"), [(3000, 0), (1500, 1500), (0, 3000)], ids=["end", "middle", "start"]
)
def test_the_evidence_of_a_long_line_shows_what_matched(tmp_path: Path, before: int, after: int) -> None:
    path = tmp_path / "long.log"
    path.write_text("A" * before + " " + CLEAN[5] + " " + "B" * after + "\n")
    text = diagnose_json(str(path))[0]["findings"][0]["evidence"][0]["text"]
    assert len(text) <= 1000
    assert CLEAN[5] in text
    assert text.startswith("…") == (before > 0)
    assert text.endswith("…") == (after > 0)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be"])
def test_utf16_log_is_decoded(tmp_path: Path, expected: list, encoding: str) -> None:
    text = "\ufeff" + "\r\n".join(CLEAN) + "\r\n"
    report = diagnose_bytes(tmp_path, text.encode(encoding))
    assert findings(report) == expected
    assert report["inputs"][0]["notes"] == ["UTF-16 text, decoded"]


def test_a_big_utf16_log_of_chinese_text_is_decoded_whole(tmp_path: Path) -> None:
    """Its UTF-8 takes half as many bytes again as its UTF-16: more than a read's buffer holds."""
    chinese = ("训练开始 步骤 损失 " * 40 + "\n") * 4000
    report = diagnose_bytes(tmp_path, (chinese + CLEAN[5] + "\n").encode("utf-16"))
    assert [(f["category"], f["evidence"][0]["line"]) for f in report["findings"]] == [
        ("device_out_of_memory", 4001)
    ]
    assert report["inputs"][0]["lines"] == 4001


def test_a_cut_off_compressed_utf16_log_is_read_up_to_the_cut(tmp_path: Path) -> None:
    lines = [f"step {i} loss {i * 0.37 % 7:.4f} tokens/s {i * 7919 % 104729}" for i in range(30_000)]
    compressed = gzip.compress(("\n".join([*lines[:20], CLEAN[5], *lines[20:]]) + "\n").encode("utf-16"))
    cut = compressed[: len(compressed) * 3 // 4]
    readable = _partial(cut, "cut.log.gz").decode("utf-16", errors="replace")
    report = diagnose_bytes(tmp_path, cut, "cut.log.gz")
    assert report["findings"][0]["evidence"][0]["line"] == 21
    record = report["inputs"][0]
    assert record["lines"] == readable.count("\n") + 1
    assert record["notes"][0] == "gzip-compressed UTF-16 text, decoded" and record["notes"][1].startswith(
        "stopped reading early"
    )


def test_a_command_a_shell_echoed_is_not_the_error_it_looks_for(tmp_path: Path) -> None:
    traced = "+ grep -c 'EL0004\\|EZ9999\\|EI0002' prev.log\n++ echo 'EL0004: Failed to allocate memory.'\n"
    assert diagnose_bytes(tmp_path, traced.encode())["findings"] == []
    report = diagnose_bytes(tmp_path, (traced + "[rank0]: " + CLEAN[5] + "\n").encode())
    assert [(f["category"], f["evidence"][0]["line"]) for f in report["findings"]] == [
        ("device_out_of_memory", 3)
    ]


def test_a_utc_timestamp_prefix_keeps_the_rank_prefix_behind_it(tmp_path: Path) -> None:
    """kubectl/docker --timestamps and CI raw logs put an ISO time before the line."""
    report = diagnose_bytes(tmp_path, f"2024-12-04T10:32:40.1234567Z [rank5]: {CLEAN[5]}\n".encode())
    evidence = report["findings"][0]["evidence"][0]
    assert (evidence["rank"], evidence["text"]) == (5, CLEAN[5])


TORCHRUN_SUMMARY = """\
============================================================
train.py FAILED
------------------------------------------------------------
Failures:
[1]:
  time      : 2024-12-04_10:06:02
  host      : node-1
  rank      : 0 (local_rank: 0)
  exitcode  : 1 (pid: 48210)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2024-12-04_10:05:31
  host      : node-1
  rank      : 3 (local_rank: 3)
  exitcode  : 1 (pid: 48213)
  error_file: /tmp/torchelastic_x/attempt_0/3/error.json
  traceback : Traceback (most recent call last):
    File "/home/user/train.py", line 212, in <module>
      loss = model(batch).loss
  {oom}
============================================================
{oom}
"""


@pytest.mark.parametrize("prefix", ["", "2024-12-04T10:32:40.1234567Z "], ids=["plain", "CI raw log"])
def test_a_traceback_in_torchruns_failure_summary_has_the_rank_of_its_entry(
    tmp_path: Path, prefix: str
) -> None:
    summary = "".join(
        prefix + line for line in TORCHRUN_SUMMARY.format(oom=CLEAN[5]).splitlines(keepends=True)
    )
    report = diagnose_bytes(tmp_path, summary.encode())
    evidence = {e["line"]: e.get("rank") for f in report["findings"] for e in f["evidence"]}
    assert evidence == {23: 3, 25: None}, "after the summary's closing rule a line is no entry's"
