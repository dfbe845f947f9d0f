"""Hardened: hostile logs, hostile rule files, closed pipes and Ctrl-C end in a report or one line on
stderr — never a traceback, a hang, a crash, executed YAML, terminal escapes or CI workflow commands."""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from io import BytesIO
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ascend_doctor.match import selfcheck
from ascend_doctor.match.matcher import Matcher
from ascend_doctor.match.prefilter import hyperscan_available
from ascend_doctor.match.scanner import StreamScanner
from ascend_doctor.render import RENDERERS
from ascend_doctor.rulebase.load import load_rulebase
from tests import processes
from tests.conftest import run_cli
from tests.test_user_rules import GOOD_RULE, rules_dir

pytestmark = pytest.mark.skipif(not processes.HAS_PROC, reason="watches processes through Linux /proc")

RULES = load_rulebase(use_cache=False).rules
TRIGGERS = sorted({line for rule in RULES for line in rule.examples.match})
WORDS = sorted({word for line in TRIGGERS for word in line.split() if len(word) >= 4})
OOM_LINE = "EL0004: Failed to allocate memory."
HOSTILE = [
    b"\x00",
    b"\x00" * 9,
    b"\xff\xfe",
    b"\xc3\x28",
    b"\xe4\xb8",
    "设备内存不足 EL0004".encode("gb18030"),
    b"\r",
    b"\r\n",
    b"\n",
    b"\n\n\n",
    b"\t",
    b"\xef\xbb\xbf",
    b"\x1b[31m",
    b"\x1b[0m",
    b"\x1b]0;title\x07",
    b"\x1b(0",
    b"\x1bc",
    b"\xc2\x9b31m",
    b"[bold red]",
    b"[/]",
    b"[/bold red]",
    b"[link=https://example.com]",
    b"[/link]",
    b"::set-env name=X::1",
    b"::add-mask::",
    b"::error::",
    b"::stop-commands::guess",
    b"%0A",
    b"[rank3]: ",
    b"(VllmWorkerProcess pid=7) ",
    b'{"message": "',
    b'"}',
    b"2024-12-04 15:32:53.009 ",
    b"[ERROR] RUNTIME(31337,python):2024-12-04-15:32:53.009.508 [stream.cc:1000]31337 ",
    b"remote rank [5] ",
    b"a" * 300,
]
COMPRESSION_MAGIC = (b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd")
SGR = re.compile(r"\x1b\[[0-9;]*m")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

piece = st.one_of(
    st.sampled_from(TRIGGERS).map(lambda line: line.encode("utf-8")),
    st.sampled_from(WORDS).map(lambda word: word.encode("utf-8")),
    st.sampled_from(HOSTILE),
    st.binary(max_size=40),
)
hostile_log = (
    st.lists(piece, max_size=30)
    .map(b"".join)
    .filter(lambda data: data and not data.startswith(COMPRESSION_MAGIC))
)
FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def no_crash(result) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    assert "internal error" not in result.stderr, result.stderr
    assert result.exit_code in (0, 1), result.stderr


# -- hostile logs ------------------------------------------------------------------------------------


@FUZZ
@given(data=hostile_log)
def test_hostile_log_gives_the_same_valid_report_every_time(data: bytes) -> None:
    first = run_cli("diagnose", "-", "--format", "json", stdin=data)
    no_crash(first)
    report = json.loads(first.stdout)
    assert report["inputs"][0]["status"] == "read", "a pipe is read whatever bytes it carries"
    for finding in report["findings"]:
        assert all(evidence["line"] >= 1 for evidence in finding["evidence"])
    again = run_cli("diagnose", "-", "--format", "json", stdin=data)
    assert (again.exit_code, again.stdout, again.stderr) == (first.exit_code, first.stdout, first.stderr)


@FUZZ
@given(data=hostile_log)
def test_hostile_log_never_reaches_the_terminal_as_markup_or_escapes(data: bytes) -> None:
    result = run_cli("diagnose", "-", "--color", stdin=data, env={"FORCE_COLOR": "1", "COLUMNS": "100"})
    no_crash(result)
    assert not CONTROL.search(SGR.sub("", result.stdout)), "only the report's own colour codes are printed"
    assert "\x1b]8;" not in result.stdout, "log text never becomes a hyperlink"


@pytest.mark.skipif(not hyperscan_available(), reason="needs hyperscan to compare the two prefilter engines")
@FUZZ
@given(data=hostile_log)
def test_both_prefilter_engines_find_the_same_on_hostile_logs(data: bytes) -> None:
    found = {}
    for engine, matcher in _matchers().items():
        scan = StreamScanner(matcher, "x.log", 0).scan(BytesIO(data))
        found[engine] = sorted((m.rule_id, m.evidence.line, m.evidence.text) for m in scan.matches)
    assert found["python"] == found["hyperscan"]


_MATCHERS: dict[str, Matcher] = {}


def _matchers() -> dict[str, Matcher]:
    if not _MATCHERS:
        _MATCHERS.update((engine, Matcher(RULES, engine)) for engine in ("python", "hyperscan"))
    return _MATCHERS


def test_a_stray_nul_in_piped_output_is_still_diagnosed() -> None:
    result = run_cli(
        "diagnose", "-", "--format", "json", stdin=f"step 1\x00\x00 loss 2\n{OOM_LINE}\n".encode()
    )
    assert result.exit_code == 1, result.stderr
    assert json.loads(result.stdout)["findings"][0]["evidence"][0]["line"] == 2


def test_report_does_not_depend_on_hash_seed(tmp_path: Path) -> None:
    """Two processes with different string hashing give byte-identical reports."""
    generator = random.Random(20241204)
    for index in range(12):
        pieces = [generator.choice(TRIGGERS).encode() for _ in range(6)] + generator.sample(HOSTILE, 8)
        generator.shuffle(pieces)
        (tmp_path / f"rank{index}.log").write_bytes(b"\n".join(pieces) + b"\n")
    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        command = [*processes.COMMAND, "diagnose", str(tmp_path), "--format", "json", "--no-cache"]
        done = subprocess.run(command, capture_output=True, env=env, timeout=120)
        assert done.returncode == 1, done.stderr
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]


NEIGHBOURS = {
    # log: (rule, its evidence lines). A line is joined with its neighbours to read hard-wrapped
    # messages, but a match lying wholly in the neighbour is the neighbour's evidence only.
    "EH99990\nEH9999: Inner Error!\n": ("cann.eh9999-inner-error", [2]),
    "assert isDifferentiableType(variable.scalar_type()) passed\n"
    "RuntimeError: isDifferentiableType(variable.scalar_type()) INTERNAL ASSERT FAILED at x.cpp:1\n": (
        "autograd.bool-tensor-requires-grad-assert",
        [2],
    ),
    "RuntimeError: Attempting to deserialize object on a\nCUDA device but torch.cuda.is_available() is False.\n": (
        "checkpoint.cuda-checkpoint-on-npu",
        [1],
    ),
}


@pytest.mark.parametrize("log", sorted(NEIGHBOURS), ids=lambda log: NEIGHBOURS[log][0])
def test_a_neighbour_line_lends_no_match_of_its_own(log: str) -> None:
    rule_id, lines = NEIGHBOURS[log]
    result = run_cli("diagnose", "-", "--format", "json", stdin=log)
    found = {f["rule_id"]: [e["line"] for e in f["evidence"]] for f in json.loads(result.stdout)["findings"]}
    assert found.get(rule_id) == lines, found


def test_log_markup_prints_literally_with_colour_forced(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_bytes(
        b"EL0004: Failed to allocate memory [bold red]RED[/] [link=https://example.com]L[/link] "
        b"\x1b(0 lqqk \x1bc reset \xc2\x9b31m c1\n"
    )
    result = run_cli("diagnose", str(log), "--color", env={"FORCE_COLOR": "1", "COLUMNS": "300"})
    assert result.exit_code == 1, result.stderr
    assert "\x1b[" in result.stdout, "colour must really be on for this test to mean anything"
    assert "[bold red]RED[/] [link=https://example.com]L[/link]" in result.stdout
    assert "\x1b]8;" not in result.stdout
    plain = SGR.sub("", result.stdout)
    assert not CONTROL.search(plain), "escape sequences from the log must not reach the terminal"
    assert "lqqk" in plain and "reset" in plain and "c1" in plain, "the text around them is kept"


# -- CI workflow commands ----------------------------------------------------------------------------

INJECTION = (
    "EL0004: Failed to allocate memory {pad} ::set-env name=PWNED::1 {pad} ::add-mask::pwned-secret\n"
    "::error::pwned-annotation EL0004: Failed to allocate memory\n"
    "::stop-commands::guess\n"
    "::set-env name=PWNED::2 EL0004: Failed to allocate memory\n"
)
OWN_COMMANDS = {"error", "warning", "notice", "group", "endgroup"}


def commands_outside_fences(output: str) -> list[str]:
    """Lines GitHub would act on that the tool did not write. Inside `::stop-commands::TOKEN` ...
    `::TOKEN::` nothing is a command; outside, only the tool's own annotations (which always carry
    properties: `::error file=...,title=...::`) and groups may start with `::`."""
    token = None
    foreign = []
    for line in output.splitlines():
        stripped = line.lstrip()
        if token is not None:
            if stripped == f"::{token}::":
                token = None
            continue
        if stripped.startswith("::stop-commands::"):
            token = stripped[len("::stop-commands::") :]
            assert len(token) >= 16 and token != "guess", "the fence token must be unguessable"
            continue
        command = re.match(r"::([\w-]*)( )?", stripped)
        if command is None:
            continue
        name, has_properties = command.group(1), command.group(2) is not None
        if name not in OWN_COMMANDS or (name in ("error", "warning", "notice") and not has_properties):
            foreign.append(line)
    assert token is None, "a fence was left open"
    return foreign


@pytest.mark.skipif("github" not in RENDERERS, reason="--format github is not written yet")
def test_github_format_fences_log_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("::error::pwned-path.log").write_text(INJECTION.format(pad="x" * 20))
    result = run_cli("diagnose", "::error::pwned-path.log", "--format", "github")
    assert result.exit_code == 1, result.stderr
    assert "::set-env name=PWNED::1" in result.stdout, "the evidence is shown, fenced"
    assert commands_outside_fences(result.stdout) == []


@pytest.mark.parametrize("width", ["80", "300"])
def test_text_report_in_github_actions_runs_no_log_text_as_a_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, width: str
) -> None:
    """In Actions the text report goes to the job log: a path, or a long line wrapped at the terminal
    width, could put log text at the start of a line."""
    monkeypatch.chdir(tmp_path)
    Path("::error::pwned-path.log").write_text(INJECTION.format(pad="y" * 30))
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")}
    env.update(FORCE_COLOR="1", COLUMNS=width)
    result = run_cli("diagnose", "::error::pwned-path.log", "--color", env=env)
    assert result.exit_code == 1, result.stderr
    assert "Diagnosis:" in result.stdout
    assert commands_outside_fences(SGR.sub("", result.stdout)) == []


# -- catastrophic user patterns ----------------------------------------------------------------------


def user_rule(pattern: str, match: str, no_match: str, rule_id: str = "team.shard-backtrack") -> str:
    return (
        GOOD_RULE.replace("team.custom-loader-crash", rule_id)
        .replace("'ShardIndexCorrupt: (?P<shard>[\\w-]+)'", f"'{pattern}'")
        .replace("['ShardIndexCorrupt: part-0007']", f"['{match}']")
        .replace("['ShardIndex ok']", f"['{no_match}']")
    )


# `regex` defuses `(a+)+$` by itself; `(a|aa)+$` still backtracks exponentially and needs the time limit.
BACKTRACK = user_rule("ShardError: (a|aa)+$", "ShardError: aaaa", "ShardError: " + "a" * 50 + "!")
HOSTILE_SHARD = "ShardError: " + "a" * 50 + "!"


def _findings(report: dict) -> list[tuple]:
    return [(f["rule_id"], [(e["line"], e["text"]) for e in f["evidence"]]) for f in report["findings"]]


def test_catastrophic_user_pattern_is_cut_off_named_and_harms_nothing_else(tmp_path: Path) -> None:
    directory = rules_dir(tmp_path, BACKTRACK)
    log = tmp_path / "train.log"
    log.write_text(f"step 1\n{HOSTILE_SHARD}\n{OOM_LINE}\n")
    started = time.monotonic()
    result = run_cli("diagnose", "--rules", str(directory), str(log), "--format", "json", "--no-cache")
    assert time.monotonic() - started < 20
    assert result.exit_code == 1, result.stderr
    warning = [line for line in result.stderr.splitlines() if "team.shard-backtrack" in line]
    assert len(warning) == 1 and "time limit" in warning[0] and "1 line" in warning[0], result.stderr
    with_rule = json.loads(result.stdout)
    assert with_rule["warnings"] and "team.shard-backtrack" in with_rule["warnings"][0]
    without = run_cli("diagnose", str(log), "--format", "json")
    assert _findings(with_rule) == _findings(json.loads(without.stdout))
    assert _findings(with_rule)[0][0] == "memory.el0004-alloc-failed"


def test_many_catastrophic_lines_do_not_hang_the_run(tmp_path: Path) -> None:
    directory = rules_dir(tmp_path, BACKTRACK)
    log = tmp_path / "train.log"
    log.write_text(f"{HOSTILE_SHARD}\n" * 300 + f"{OOM_LINE}\n")
    started = time.monotonic()
    result = run_cli("diagnose", "--rules", str(directory), str(log), "--format", "json", "--no-cache")
    elapsed = time.monotonic() - started
    assert result.exit_code == 1, result.stderr
    assert elapsed < 30, f"300 backtracking lines took {elapsed:.0f} s"
    assert "team.shard-backtrack" in result.stderr and "time limit" in result.stderr
    assert _findings(json.loads(result.stdout))[0][0] == "memory.el0004-alloc-failed"


def test_rules_test_warns_about_a_pattern_slow_on_its_own_example(tmp_path: Path) -> None:
    directory = rules_dir(tmp_path, BACKTRACK)
    result = run_cli("rules", "test", str(directory))
    assert "Traceback" not in result.stderr
    warning = [line for line in result.stderr.splitlines() if line.startswith("warning team.shard-backtrack")]
    assert warning, result.stderr
    assert "slow" in warning[0] and "no_match[0]" in warning[0] and "time limit" in warning[0], warning


@pytest.mark.usefixtures("stopped_clock")
def test_rules_test_is_quiet_about_a_fast_pattern(tmp_path: Path) -> None:
    directory = rules_dir(tmp_path, user_rule("ShardError: (a+)+$", "ShardError: aaaa", HOSTILE_SHARD))
    result = run_cli("rules", "test", str(directory))
    assert result.exit_code == 0, result.stdout
    assert "slow" not in result.stderr


ENGINES = ["python", *(["hyperscan"] if hyperscan_available() else [])]
ODD_PATTERNS = {
    # pattern: (a line it matches, a line it does not)
    "[[:alpha:]]ShardError": (
        "xShardError: 7",
        "7ShardError: 7",
    ),  # POSIX class: `re` reads it as `[[:alpha:]` + `]`
    "\\x00ShardError": ("\x00ShardError: 7", "ShardError: 7"),  # a NUL inside the literal
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("pattern", sorted(ODD_PATTERNS))
def test_user_patterns_in_regex_only_syntax_still_match(tmp_path: Path, pattern: str, engine: str) -> None:
    hit, miss = ODD_PATTERNS[pattern]
    directory = rules_dir(tmp_path, user_rule(pattern.replace("'", "''"), "xShardError", "ShardError"))
    result = run_cli(
        "diagnose",
        "--rules",
        str(directory),
        "--engine",
        engine,
        "--format",
        "json",
        "-",
        stdin=f"{miss}\n\n{hit}\n",
    )
    assert result.exit_code == 1, result.stderr
    evidence = json.loads(result.stdout)["findings"][0]["evidence"]
    assert [e["line"] for e in evidence] == [3]


# -- broken and hostile rule files -------------------------------------------------------------------

RULE_ID = "team.custom-loader-crash"
BROKEN = {
    # case: (file content, line in the message (0: none), rule id named, message fragment)
    "category is a list": (
        GOOD_RULE.replace("category: not_ascend", "category: [not_ascend]"),
        3,  # the line of the key that is wrong
        RULE_ID,
        "category",
    ),
    "severity is a set": (
        GOOD_RULE.replace("severity: error", "severity: !!set {a, b}"),
        4,
        RULE_ID,
        "severity",
    ),
    "severity is binary": (
        GOOD_RULE.replace("severity: error", "severity: !!binary aGk="),
        4,
        RULE_ID,
        "severity",
    ),
    "id is a mapping": (GOOD_RULE.replace(f"id: {RULE_ID}", "id: {a: 1}"), 2, "", "'id' must be"),
    "key is a date": (
        GOOD_RULE.replace("    severity: error", "    severity: error\n    2024-01-01: x"),
        2,
        RULE_ID,
        "unknown key",
    ),
    "merge key": (
        GOOD_RULE.replace("    severity: error", "    severity: error\n    <<: {x: 1}"),
        2,
        RULE_ID,
        "unknown key 'x'",
    ),
    "key is a list": (
        GOOD_RULE.replace("    severity: error", "    severity: error\n    [a]: 1"),
        5,
        "",
        "invalid YAML",
    ),
    "duplicate key": (
        GOOD_RULE.replace("    severity: error", "    severity: error\n    severity: info"),
        5,
        "",
        "appears twice",
    ),
    "duplicate id in one file": (GOOD_RULE + GOOD_RULE.replace("rules:\n", ""), 12, RULE_ID, "duplicate id"),
    "python apply tag": (
        GOOD_RULE.replace("severity: error", "severity: !!python/object/apply:os.system ['touch {marker}']"),
        4,
        "",
        "invalid YAML",
    ),
    "python tag as the document": (
        "!!python/object/apply:os.system ['touch {marker}']\n",
        1,
        "",
        "invalid YAML",
    ),
    "python new tag": (
        "rules:\n  - !!python/object/new:os.system ['touch {marker}']\n",
        2,
        "",
        "invalid YAML",
    ),
    "python name tag": ("rules: !!python/name:os.system\n", 1, "", "invalid YAML"),
    "billion laughs": (
        "a: &a ['lol','lol','lol','lol','lol','lol','lol','lol','lol']\n"
        + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [{','.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8))
        + "rules: *i\n",
        9,
        "",
        "aliases",
    ),
    "10 MB file": (GOOD_RULE + "# " + "x" * (10 * 1024 * 1024) + "\n", 0, "", "larger than"),
    "latin-1": (
        GOOD_RULE.replace("Our data loader crashed", "Caf\xe9 crashed").encode("latin-1", "replace"),
        5,
        "",
        "UTF-8",
    ),
    "UTF-16": (GOOD_RULE.encode("utf-16"), 1, "", "UTF-8"),
    "NUL byte": (GOOD_RULE.encode() + b"\x00\n", 0, "", "invalid YAML"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_rule_file_is_one_clear_line(tmp_path: Path, case: str) -> None:
    content, line, rule_id, message = BROKEN[case]
    marker = tmp_path / "EXECUTED"
    if isinstance(content, str):
        content = content.replace("{marker}", str(marker)).encode("utf-8")
    directory = tmp_path / "rules"
    directory.mkdir()
    path = directory / "team.yaml"
    path.write_bytes(content)
    log = tmp_path / "a.log"
    log.write_text(f"{OOM_LINE}\n")
    for command in (
        ["diagnose", "--no-cache", "--rules", str(directory), str(log)],
        ["rules", "test", str(directory)],
    ):
        result = run_cli(*command)
        assert result.exit_code == 2, (command, result.stdout, result.stderr)
        where = f"{path}:{line}:" if line else f"{path}:"
        assert result.stderr.startswith(f"ascend-doctor: error: {where}"), result.stderr
        assert len(result.stderr.splitlines()) == 1, result.stderr
        if rule_id:
            assert f"rule {rule_id}:" in result.stderr
        assert message in result.stderr
        assert not marker.exists(), "a YAML tag ran a command"


NESTED = {
    "flow sequences": "rules: " + "[" * 100_000 + "]" * 100_000 + "\n",
    "flow mappings": "rules: " + "{a: " * 100_000 + "1" + "}" * 100_000 + "\n",
    "block sequences": "rules:\n" + "- " * 1_000_000 + "x\n",
}


@pytest.mark.parametrize("case", sorted(NESTED))
def test_deeply_nested_rule_file_is_refused_not_a_crash(tmp_path: Path, case: str) -> None:
    """A parser that recurses per level would overflow the C stack: run it in its own process."""
    directory = rules_dir(tmp_path, NESTED[case])
    log = tmp_path / "a.log"
    log.write_text(f"{OOM_LINE}\n")
    command = [*processes.COMMAND, "diagnose", "--no-cache", "--rules", str(directory), str(log)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert done.stderr.startswith(f"ascend-doctor: error: {directory / 'team.yaml'}:")
    assert "nested" in done.stderr and len(done.stderr.splitlines()) == 1, done.stderr


def test_rule_file_that_is_a_directory_is_refused(tmp_path: Path) -> None:
    directory = rules_dir(tmp_path, GOOD_RULE)
    (directory / "more.yaml").mkdir()
    result = run_cli("diagnose", "--rules", str(directory), "-", stdin=f"{OOM_LINE}\n")
    assert result.exit_code == 2, result.stderr
    assert result.stderr.startswith(f"ascend-doctor: error: {directory / 'more.yaml'}: ")
    assert "directory" in result.stderr


@pytest.mark.parametrize("fmt", sorted(RENDERERS))
def test_a_file_name_that_is_not_utf8_is_reported_escaped(tmp_path: Path, fmt: str) -> None:
    """A GBK-named log on a UTF-8 system: its name cannot be written as text, so it is shown as \\xNN."""
    (tmp_path / os.fsdecode(b"rank\xb4\xed\xce\xf3.log")).write_text(f"{OOM_LINE}\n")
    report = tmp_path / "report.out"
    result = run_cli("diagnose", str(tmp_path), "--format", fmt, "-o", str(report))
    assert result.exit_code == 1, result.stderr
    shown = "rank\\xb4\\xed\\xce\\xf3.log"
    text = report.read_text(encoding="utf-8").replace("\\\\", "\\")  # JSON doubles the backslash
    assert shown in text or quote(shown) in text  # SARIF has it as a URI


def test_a_file_name_that_is_not_utf8_on_a_strict_utf8_stdout(tmp_path: Path) -> None:
    (tmp_path / os.fsdecode(b"rank\xb4\xed.log")).write_text(f"{OOM_LINE}\n")
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict"}  # stdout as under LANG=en_US.UTF-8
    done = subprocess.run([*processes.COMMAND, str(tmp_path)], capture_output=True, env=env, timeout=60)
    assert done.returncode == 1, done.stderr.decode()
    assert b"rank\\xb4\\xed.log:1" in done.stdout


# -- pipes and signals -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def every_example_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every match example of every rule: the largest report the rule base can give."""
    path = tmp_path_factory.mktemp("pipe") / "big.log"
    path.write_text("\n".join(TRIGGERS * 3) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("fmt", sorted(RENDERERS))
def test_output_into_a_closed_pipe_ends_quietly(every_example_log: Path, fmt: str) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        command = [*processes.COMMAND, "diagnose", str(every_example_log), "--format", fmt]
        done = subprocess.run(command, stdout=write_end, stderr=subprocess.PIPE, timeout=60)
    finally:
        os.close(write_end)
    assert done.stderr == b"", done.stderr.decode()
    assert done.returncode in (0, 1)


@pytest.mark.parametrize("fmt", ["text", "sarif"])
def test_piped_into_head_prints_one_line_and_no_error(every_example_log: Path, fmt: str) -> None:
    command = " ".join([*processes.COMMAND, "diagnose", str(every_example_log), "--format", fmt])
    done = subprocess.run(f"{command} | head -1", shell=True, capture_output=True, text=True, timeout=60)
    assert len(done.stdout.splitlines()) == 1
    assert done.stderr == "", done.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_full_disk_on_stdout_is_one_clear_error(every_example_log: Path, fmt: str) -> None:
    with open("/dev/full", "w") as full:
        command = [*processes.COMMAND, "diagnose", str(every_example_log), "--format", fmt]
        done = subprocess.run(command, stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert (
        done.stderr
        == "ascend-doctor: error: cannot write the report to standard output: No space left on device\n"
    )


def test_a_closed_stdout_is_one_clear_error(every_example_log: Path) -> None:
    command = [*processes.COMMAND, "diagnose", str(every_example_log)]
    done = subprocess.run(
        command, stderr=subprocess.PIPE, text=True, timeout=60, preexec_fn=lambda: os.close(1)
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("ascend-doctor: error: cannot write the report: standard output is closed")
    assert len(done.stderr.splitlines()) == 1, done.stderr


@pytest.mark.parametrize("args", [[], ["--format", "json"]], ids=["direct", "through click"])
def test_stderr_into_a_closed_pipe_still_gives_the_report(tmp_path: Path, args: list[str]) -> None:
    """The notices are lost, not the report and its exit code."""
    log = tmp_path / "train.log"
    log.write_text("EL0004: Failed to allocate memory\n")
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        command = [*processes.COMMAND, str(log), str(tmp_path / "missing.log"), *args]
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=write_end, text=True, timeout=60)
    finally:
        os.close(write_end)
    assert "EL0004" in done.stdout
    assert done.returncode == 2  # a named input is missing


def interrupted(proc: subprocess.Popen[bytes], to_group: bool = True) -> tuple[int, str]:
    if to_group:
        os.killpg(proc.pid, signal.SIGINT)
    else:
        proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    return proc.returncode, stderr.decode()


def assert_one_interrupted_line(code: int, stderr: str) -> None:
    assert code == 130, stderr
    assert stderr.strip().splitlines() == ["ascend-doctor: interrupted"], stderr


def assert_nothing_left(pgid: int) -> None:
    assert processes.wait_until(lambda: not processes.group_members(pgid), timeout=10), (
        f"orphaned processes: {processes.group_members(pgid)}"
    )


def test_ctrl_c_while_waiting_on_stdin(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    try:
        proc = processes.start(["-"], stdin=read_end)
        os.close(read_end)
        os.write(write_end, f"{OOM_LINE}\n".encode())
        processes.wait_until(lambda: processes.blocked_on_pipe(proc.pid), timeout=20)
        assert_one_interrupted_line(*interrupted(proc))
    finally:
        os.close(write_end)
    assert_nothing_left(proc.pid)


def _slow_log(path: Path, megabytes: int) -> None:
    line = b"2024-12-04 15:32:50.001 [INFO] step 1 loss 1.2345 lr 0.0001 tokens/s 1234.5 grad norm 0.99\n"
    path.write_bytes(line * (megabytes * 1024 * 1024 // len(line)) + f"{OOM_LINE}\n".encode())


def test_ctrl_c_during_the_scan_of_a_large_file(tmp_path: Path) -> None:
    log = tmp_path / "large.log"
    _slow_log(log, 24)
    proc = processes.start(["diagnose", str(log), "--engine", "python"])

    def scanning() -> bool:  # started, and most of the file still to read
        position = processes.read_position(proc.pid, "large.log")
        return position is not None and position < log.stat().st_size // 2

    assert processes.wait_until(scanning), "the scan was never seen under way"
    assert_one_interrupted_line(*interrupted(proc))
    assert_nothing_left(proc.pid)


@pytest.mark.parametrize("to_group", [True, False], ids=["terminal-ctrl-c", "kill-int-parent"])
def test_ctrl_c_with_worker_processes_leaves_none_behind(tmp_path: Path, to_group: bool) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    for rank in range(4):
        _slow_log(logs / f"rank{rank}.log", 6)
    proc = processes.start(["diagnose", str(logs), "--jobs", "2", "--engine", "python"])

    def workers_scanning() -> bool:
        workers = processes.children(proc.pid)
        return len(workers) >= 2 and all(processes.has_open(pid, ".log") for pid in workers)

    assert processes.wait_until(workers_scanning), "the workers never started scanning"
    assert_one_interrupted_line(*interrupted(proc, to_group))
    assert_nothing_left(proc.pid)


# -- many and very long inputs -----------------------------------------------------------------------


def _lower_open_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ten_thousand_files_with_64_file_handles(tmp_path_factory: pytest.TempPathFactory, jobs: str) -> None:
    logs = tmp_path_factory.mktemp("many")
    padding = "2024-12-04 15:32:50 [INFO] step ok\n" * 60  # 2 KB a file: 20 MB in all, enough for workers
    for index in range(10_000):
        tail = f"{OOM_LINE}\n" if index % 500 == 7 else "done\n"
        (logs / f"rank{index:05d}.log").write_text(padding + tail)
    command = [*processes.COMMAND, "diagnose", str(logs), "--format", "json", "--jobs", jobs]
    done = subprocess.run(command, capture_output=True, preexec_fn=_lower_open_files, timeout=300)
    assert done.returncode == 1, done.stderr.decode()[-2000:]
    report = json.loads(done.stdout)
    assert len(report["inputs"]) == 10_000
    assert all(record["status"] == "read" for record in report["inputs"])
    assert report["findings"][0]["rule_id"] == "memory.el0004-alloc-failed"
    assert report["findings"][0]["count"] == 20


MEASURE_RSS = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(done.returncode, peak, done.stdout.decode()[:20000], sep="\\n")
sys.stderr.write(done.stderr.decode())
"""


@pytest.mark.skipif(
    not hyperscan_available(), reason="the pure-Python prefilter reads ~2 MB/s: 200 MB would take minutes"
)
def test_a_200_mb_single_line_stays_within_120_mb_of_memory(tmp_path: Path) -> None:
    log = tmp_path / "one-line.log"
    block = b"abc def " * (128 * 1024)  # 1 MiB, no newline
    with log.open("wb") as handle:
        for index in range(200):
            handle.write(block)
            if index in (50, 150):
                handle.write(b" EL0004: Failed to allocate memory. ")
        handle.write(b"\n")
    command = [*processes.COMMAND, "diagnose", str(log), "--format", "json"]
    done = subprocess.run(
        [sys.executable, "-c", MEASURE_RSS, *command], capture_output=True, text=True, timeout=300
    )
    code, peak_kb, stdout = done.stdout.split("\n", 2)
    peak_mb = int(peak_kb) / 1024  # Linux reports ru_maxrss in KiB
    print(f"peak RSS diagnosing a 200 MB one-line file: {peak_mb:.1f} MB")
    assert code == "1", done.stderr
    report = json.loads(stdout)
    assert report["findings"][0]["rule_id"] == "memory.el0004-alloc-failed"
    assert report["findings"][0]["evidence"][0]["line"] == 1
    assert peak_mb <= 120


def _clock_of(durations: list[float]) -> Callable[[], float]:
    """A clock under which each timed run of an example takes the next of `durations` seconds."""
    runs = iter(durations)
    calls = itertools.count()
    now = 0.0

    def clock() -> float:
        nonlocal now
        if next(calls) % 2:  # the end of a run
            now += next(runs, 0.0001)
        return now

    return clock


@pytest.mark.parametrize(
    ("durations", "slow"),
    [([0.05, 0.0001], False), ([0.05, 0.05], True)],
    ids=["one pause", "slow again"],
)
def test_rules_test_reports_only_an_example_that_is_slow_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, durations: list[float], slow: bool
) -> None:
    """A garbage collection or a busy machine during one example is not a slow pattern."""
    rulebase = load_rulebase([str(rules_dir(tmp_path, GOOD_RULE))], bundled=False)
    monkeypatch.setattr(selfcheck, "_clock", _clock_of(durations))
    check = selfcheck.check_rules(rulebase.rules)
    assert check.ok
    assert [problem.detail[:8] for problem in check.warnings if problem.kind == "slow"] == (
        ["match[0]"] if slow else []
    )
