"""Each prefilter engine finds every literal of the rule base, however the literal is searched
(a trie piece with its lookbehind, or `bytes.find` for literals that start with common bytes)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from ascend_doctor.match import prefilter
from ascend_doctor.match.literals import Literal
from ascend_doctor.match.matcher import Matcher
from ascend_doctor.rulebase.load import load_rulebase

ENGINES = ["python", "hyperscan"] if prefilter.hyperscan_available() else ["python"]
# The rule base's literals, and one made only of common bytes (as a user rule's may be), which
# the python engine finds with `bytes.find` rather than its trie (`0:0:0:0` no longer is: other
# forms now start at `:` too, so `re` enters there anyway).
COMMON_ONLY = Literal("0-0-0-0", False)
LITERALS = (*Matcher(load_rulebase().rules, "python", use_cache=False)._index.literals, COMMON_ONLY)


@pytest.mark.parametrize("engine", ENGINES)
def test_every_literal_is_found_on_its_line_with_its_key(engine: str) -> None:
    found = prefilter.make_prefilter(LITERALS, engine, complete=True)
    lines = [f"step 12: lr=0.1 {literal.text} done" for literal in LITERALS]
    block = ("\n".join(lines) + "\n").encode("utf-8")
    spans = {block[start:end].decode(): keys for start, end, keys in found.spans(block)}
    for key, line in enumerate(lines):
        assert line in spans, f"{LITERALS[key]!r} not found"
        assert spans[line] is None or key in spans[line], f"{LITERALS[key]!r} found without its key"


def test_the_python_engine_finds_some_literals_with_bytes_find() -> None:
    """The common-start literals really take the find path, so the test above covers it."""
    engine = prefilter.make_prefilter(LITERALS, "python", complete=True)
    anchored = {data for group in (engine._plain, engine._blurred) for data in group.anchors}
    assert COMMON_ONLY.text.encode() in anchored


def test_a_common_byte_that_few_exact_forms_need_is_not_a_trie_entry() -> None:
    """`re` would enter its trie at every `1` of a log for one code made of common bytes: the
    code is found by `bytes.find`, and the forms that also start at `1` move to a rarer byte."""
    moving = [Literal(f"1Zk{number:02d}", False) for number in range(12)]
    literals = (Literal("100024", False), *moving, Literal("ZZZZ", False))
    forms = prefilter.literal_forms(literals)
    offsets = prefilter.piece_offsets(forms)
    anchored = prefilter.anchored_forms(forms, offsets)
    assert {literal.text.encode() for literal in literals} & anchored == {b"100024"}
    assert all(data[offsets[data, fold]] != ord("1") for data, fold, _key in forms if data not in anchored)
    found = prefilter.make_prefilter(literals, "python", complete=True)
    block = "".join(f"step {key} {literal.text} ok\n" for key, literal in enumerate(literals)).encode()
    assert [keys for _start, _end, keys in found.spans(block)] == [
        frozenset({key}) for key in range(len(literals))
    ]


def _listed(found: Any, lines: list[str]) -> dict[str, frozenset[int] | None]:
    """Each line the prefilter lists in a block of `lines`, with its keys."""
    block = ("\n".join(lines) + "\n").encode()
    return {block[start:end].decode(): keys for start, end, keys in found.spans(block)}


def test_lines_alike_but_for_their_numbers_are_each_listed_with_their_own_literals() -> None:
    """The pure-Python engine scans each line once whatever its numbers (blurred), then lists
    every line of the block with the literals its own bytes hold; a code that is all digits is
    found only where the log holds that very code."""
    literals = (Literal("python3.12", False), Literal("507011", False), Literal("NPU out of memory", False))
    found = prefilter.make_prefilter(literals, "python", complete=True)
    lines = [f"step {number} python3.{number % 20} ok" for number in range(40)]
    lines += [
        "error code 507011",
        "error code 507012",
        "step 7 NPU out of memory",
        "step 8 NPU out of memory",
    ]
    assert _listed(found, lines) == {
        "step 12 python3.12 ok": frozenset({0}),
        "step 32 python3.12 ok": frozenset({0}),
        "error code 507011": frozenset({1}),
        "step 7 NPU out of memory": frozenset({2}),
        "step 8 NPU out of memory": frozenset({2}),
    }


def test_lines_alike_but_for_their_hex_are_scanned_once_and_listed_by_their_own_bytes() -> None:
    """A plog prints pointers and cache keys that differ in every line: the pure-Python engine
    blurs hex digits in both cases, so forty such lines are one text to scan; each line is still
    listed only where its own bytes hold a literal, in the literal's own case unless it ignores
    case, and a literal made of hex (`0xdeadbeef`) only where the log holds that very one."""
    literals = (
        Literal("failed to allocate", True),
        Literal("bad alloc", False),
        Literal("0xdeadbeef", False),
    )
    found = prefilter.make_prefilter(literals, "python", complete=True)
    lines = [f"alloc ptr=0x{number * 7919:012x} key={number * 104729:016X} ok" for number in range(40)]
    lines += [
        "ptr=0xABCDEF failed to allocate memory",
        "ptr=0x123456 FAILED TO ALLOCATE memory",
        "ptr=0x123456 FAILED TO ALLOCATF memory",
        "bad alloc at 0xdead",
        "BAD ALLOC at 0xdead",
        "code 0xdeadbeef",
        "code 0xdeadbeee",
    ]
    assert _listed(found, lines) == {
        "ptr=0xABCDEF failed to allocate memory": frozenset({0}),
        "ptr=0x123456 FAILED TO ALLOCATE memory": frozenset({0}),
        "bad alloc at 0xdead": frozenset({1}),
        "code 0xdeadbeef": frozenset({2}),
    }
    assert sum(text.endswith(b" ok") for text in found._known._young_bare) == 1


def test_a_literal_mostly_of_hex_is_not_searched_from_a_hex_digit() -> None:
    """Blurred, nearly half of a log's bytes read as 0: a literal made of hex digits and spaces is
    searched from a space, not from a 0 that would start a search at every digit, and is found."""
    literal = Literal("a1 e2 c3", False)
    engine = prefilter.make_prefilter((literal,), "python", complete=True)
    group = engine._blurred
    assert ord("0") not in group.regexes
    assert all(data[group._rarest[data]] != ord("0") for data in group.anchors)
    lines = [f"ptr=0x{number * 7919:012x} ok" for number in range(20)] + ["id a1 e2 c3 done", "id a1 e2 c4"]
    block = ("\n".join(lines) + "\n").encode()
    assert [block[start:end] for start, end, _keys in engine.spans(block)] == [b"id a1 e2 c3 done"]


def test_lines_met_in_earlier_blocks_are_listed_as_a_fresh_scan_lists_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The pure-Python engine remembers each blurred text it scanned, across blocks and files;
    a remembered text is still checked in every later line's own bytes (`python3.10` reads as
    `python3.12` blurred), and forgetting old texts or not keeping long ones changes nothing."""
    monkeypatch.setattr(prefilter, "KNOWN_BYTES", 700)
    monkeypatch.setattr(prefilter, "KNOWN_ENTRY", 0)
    monkeypatch.setattr(prefilter, "KNOWN_LINE", 40)
    literals = (Literal("python3.12", False), Literal("NPU out of memory", False))
    blocks = [
        "".join(
            f"rank {rank} python3.{(rank * step) % 20} step {step}{' padded' * (step % 9)}\n"
            f"rank {rank} NPU out of memory at step {step}\n"
            for step in range(12)
        ).encode()
        for rank in range(6)
    ]
    remembering = prefilter.make_prefilter(literals, "python", complete=True)
    for block in blocks:
        fresh = prefilter.make_prefilter(literals, "python", complete=True)
        assert list(remembering.spans(block)) == list(fresh.spans(block))
    assert remembering._known._old or remembering._known._old_bare, (
        "the young generation never filled: nothing was forgotten"
    )
    assert any(b"python3.12" in block for block in blocks[1:])
    assert any(b"python3.10" in block for block in blocks[1:])


def test_a_long_line_scanned_in_chunks_lists_every_literal_a_whole_scan_lists(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A line over KNOWN_LINE bytes is scanned in chunks cut at CRs and spaces, LONG_CHUNK bytes
    apart; a literal across a cut (most are here: each line holds one, shifted by 0 to 40 bytes,
    and cuts fall every 16) is still found, with its key, and the chunks remembered from the first
    pass find the same ones in the second."""
    lines = [
        f"\rstep {key}: loss 0.{key} " * (key % 3) + f"{'y' * (key % 41)} {literal.text} done"
        for key, literal in enumerate(LITERALS)
    ]
    block = ("\n".join(lines) + "\n").encode("utf-8")
    monkeypatch.setattr(prefilter, "KNOWN_LINE", 10**9)
    whole = prefilter.make_prefilter(LITERALS, "python", complete=True)
    expected = list(whole.spans(block))
    assert len(expected) == len(lines)
    expected_hits = [whole.hits(block, start, end) for start, end, _keys in expected]
    monkeypatch.setattr(prefilter, "KNOWN_LINE", 80)
    monkeypatch.setattr(prefilter, "LONG_CHUNK", 16)
    chunked = prefilter.make_prefilter(LITERALS, "python", complete=True)
    for _again in range(2):
        assert list(chunked.spans(block)) == expected
        assert [chunked.hits(block, start, end) for start, end, _keys in expected] == expected_hits
        assert chunked._known_chunks._young, "no chunk was remembered"


def test_a_long_line_is_cut_where_its_bytes_say_and_its_chunks_overlap_by_the_reach() -> None:
    """Each cut follows a CR or a space, at least LONG_CHUNK bytes past the last one, and each
    chunk holds the `reach` bytes after the next cut (a form that begins in a chunk ends in it).
    Where a cut falls depends on the bytes there, not on where the block began: a long line of one
    record printed over and over (a redrawn progress bar, records with no line end between them)
    is scanned as a few chunks, each once per run."""
    reach = 31
    record = b"abc def 0.0000, "
    progress = b"".join(b"\r 00%|" + b"#" * (step % 5) + b" | 00/000 [00:00<00:00]" for step in range(4000))
    texts = [(record * 2000)[skip:] for skip in range(len(record))]
    texts += [progress, progress + b"\r", b"x" * 9000, b"x" * 3000 + b" " + b"y" * 6000]
    for text in texts:
        chunks = prefilter._chunks(text, reach)
        starts = [at for at, _chunk in chunks]
        assert starts[0] == 0
        assert all(text[at - 1 : at] in (b"\r", b" ") for at in starts[1:])
        assert all(later - earlier > prefilter.LONG_CHUNK for earlier, later in zip(starts, starts[1:]))
        ends = [at + len(chunk) for at, chunk in chunks]
        assert all(end >= min(later + reach, len(text)) for end, later in zip(ends, starts[1:]))
        assert ends[-1] == len(text)
        assert all(chunk for _at, chunk in chunks)
        assert all(text[at : at + len(chunk)] == chunk for at, chunk in chunks)
    for text in texts[: len(record)]:
        chunks = prefilter._chunks(text, reach)
        assert len(chunks) > 10
        assert len({chunk for _at, chunk in chunks[1:-1]}) <= len(record)
    assert len({chunk for _at, chunk in prefilter._chunks(progress, reach)[1:-1]}) <= 5


def test_each_first_byte_of_a_group_gets_a_regex_that_starts_with_it() -> None:
    """`re` finds one plain first byte at ~1.6 GB/s but skips to any byte of an alternation at a
    tenth of that: every group is scanned with one regex per byte its pieces start with."""
    engine = prefilter.make_prefilter(LITERALS, "python", complete=True)
    for group in (engine._plain, engine._blurred):
        assert len(group.regexes) > 1
        for first, regex in group.regexes.items():
            assert regex.pattern.startswith(re.escape(bytes([first])))
    assert {ord("E"), ord("x")} <= set(engine._plain.regexes)  # the codes (`EZ9999`) and hex codes
    assert b"\x1b" in engine._plain.anchors and b"{" in engine._plain.anchors


def test_walking_a_rare_byte_finds_the_lines_a_full_pass_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pure-Python engine walks a first byte's places with memchr until it proves common,
    then lets the regex (or `find`) take the rest: the lines listed are the same either way,
    for every literal of the rule base, among lines full of the bytes the literals start with."""
    noise = "E7xXW 0x8 1000 EZ99 suppor modu 07 x8"
    lines = [f"{noise} {literal.text} {noise}" for literal in LITERALS] + [noise] * 300
    block = ("\n".join(lines) + "\n").encode("utf-8")
    listed = {}
    for hits in (0, 1, 10_000):
        monkeypatch.setattr(prefilter, "WALK_HITS", hits)
        found = prefilter.make_prefilter(LITERALS, "python", complete=True)
        listed[hits] = [(start, end, keys) for start, end, keys in found.spans(block)]
    assert listed[0] == listed[1] == listed[10_000]
    assert [block[start:end].decode() for start, end, _keys in listed[0]] == lines[: len(LITERALS)]


@pytest.mark.parametrize("hits", [0, 1, 3, 10_000])
def test_a_form_walked_by_a_byte_inside_it_is_found_wherever_it_starts(
    monkeypatch: pytest.MonkeyPatch, hits: int
) -> None:
    """An anchored form walked by its rarest byte (not its first) is found at the very start of
    the text, where the byte's place minus its offset is 0, and wherever else it is, however
    many places the walk checks before `find` takes over; a byte with more places than that
    is not walked again."""
    monkeypatch.setattr(prefilter, "WALK_HITS", hits)
    for text in (b"0-Q-0" + b" 0-0 Q 0-Q-0" * 3, b"Q-0-Q-0 Q0-Q-0-Q-0 Q"):
        every = [match.start() for match in re.finditer(rb"(?=0-Q-0)", text)]
        assert every[0] in (0, 2) and len(every) >= 3
        common: set[int] = set()
        assert sorted(prefilter._rare_places(text, b"0-Q-0", 2, common)) == every
        assert common == ({ord("Q")} if hits < text.count(b"Q") else set())
        assert sorted(prefilter._rare_places(text, b"0-Q-0", 2, {ord("Q")})) == every
