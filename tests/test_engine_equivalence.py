"""Every speed-up leaves the findings alone: both prefilter engines, one or two worker processes,
the rule cache on or off, the small-input path on or off, `re` standing in for `regex`, all give
the findings of the plain path (every line, every literal, every pattern, `regex` alone), on the
fixtures and on a generated multi-MB log."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from ascend_doctor import engine
from ascend_doctor.match import matcher, parts, scanner
from ascend_doctor.match.prefilter import hyperscan_available
from ascend_doctor.rulebase.load import load_rulebase
from tests.conftest import FIXTURES, run_cli

ENGINES = ["python", "hyperscan"] if hyperscan_available() else ["python"]
NOISE = [
    "2024-12-04 15:32:{s:02d},{ms:03d} - INFO - trainer - step {n}: samples/sec=12.5 tokens/sec=4096.0",
    "[rank{r}]: 2024-12-04 15:32:{s:02d},{ms:03d} INFO  [train.py:{n}] micro step {n}, lr 1.0e-4",
    " iteration {n:8d}/  500000 | consumed samples: {n} | lm loss: 2.5E+00 | grad norm: 1.2 |",
    "[INFO] GE(6140,python3.9):2024-12-04-15:32:{s:02d}.{ms:03d}.508 [graph_manager.cc:{n}]6141 Build graph {r} success",
    "[W compiler_depend.ts:{n}] Warning: Warning: kernel [ArgMin] can not support dtype int32 on AiCore",
    "building dataset index for split train: {n} docs, result ret={r} error_rate=0.0",
    "[rank{r}]: retrying checkpoint upload, attempt {r} failed to connect, will retry",
    "NPU {r}: HBM usage {n}/65536 MB, aicore 50%, temp 40C, device {r} task {n}",
    '{{"level": "info", "msg": "step {n} done", "rank": {r}}}',
    "Epoch 1: {r}%|██        | {n}/10000 [00:01<00:09,  9.99it/s, loss=1.234]",
    "",
]


def _examples() -> list[str]:
    rules = load_rulebase(use_cache=False).rules
    lines = [line for rule in rules for line in (*rule.examples.match, *rule.examples.no_match)]
    for log in sorted(FIXTURES.glob("*.log")):
        lines.extend(log.read_text(encoding="utf-8", errors="replace").splitlines()[:200])
    return [line for line in lines if line.strip()]


def _shaped(line: str, rng: random.Random) -> list[bytes]:
    """One incident line in one of the shapes real logs give it."""
    shape = rng.randrange(11)
    if shape == 0:
        return [f"[rank{rng.randrange(16)}]: {line}".encode()]
    if shape == 1 and len(line) > 40:  # hard-wrapped by a terminal or a logger
        cut = rng.randrange(10, len(line) - 5)
        return [line[:cut].encode(), line[cut:].encode()]
    if shape == 2:
        return [json.dumps({"level": "error", "msg": line}).encode()]
    if shape == 3:
        return [f"\x1b[31m{line}\x1b[0m".encode()]
    if shape == 4:
        return [f"progress 10%\r{line}\rprogress 20%".encode()]
    if shape == 5:
        filler = "x=1.0, " * rng.randrange(2500, 4000)  # a line longer than one segment
        return [f"tensor([{filler}]) {line} {filler}".encode()]
    if shape == 6:
        return [f"警告: {line}".encode("gbk", errors="replace")]
    if shape == 7:
        return [("\ufeff" + line).encode()]
    if shape == 8:  # a long argument dump: its `{` makes the bytes unsure, so literals come from the text
        filler = "'lr': 0.1, " * rng.randrange(1000, 2000)
        return [f"Namespace(args={{{filler}'note': '{line}', {filler}}})".encode()]
    return [line.encode()]


def generate(path: Path, size: int, seed: int) -> None:
    """A seeded log of about `size` bytes: noise, near misses, and every rule example in a shape."""
    rng = random.Random(seed)
    incidents = _examples()
    rng.shuffle(incidents)
    written = 0
    with path.open("wb") as handle:
        while written < size:
            if rng.random() < 0.02 and incidents:
                lines = _shaped(incidents.pop(), rng)
            else:
                template = rng.choice(NOISE)
                values = {"s": rng.randrange(60), "ms": rng.randrange(1000), "n": rng.randrange(10**6)}
                lines = [template.format(r=rng.randrange(16), **values).encode()]
            for line in lines:
                handle.write(line + b"\n")
                written += len(line) + 1


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("corpus")
    generate(directory / "rank0.log", 1_500_000, seed=1)
    generate(directory / "rank1.log", 1_200_000, seed=2)
    return directory


def _fixture_inputs() -> list[str]:
    return sorted(str(path) for path in FIXTURES.iterdir() if path.suffix == ".log" or path.is_dir())


def _findings(paths: list[str], *options: str) -> list[Any]:
    result = run_cli("diagnose", "--format", "json", *options, *paths)
    assert result.exit_code in (0, 1), result.stderr
    return json.loads(result.stdout)["findings"]


@pytest.fixture
def plain(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Findings with every speed-up off: every line a candidate, every literal and pattern tried."""

    def run(paths: list[str]) -> list[Any]:
        if tuple(paths) not in _PLAIN:
            with monkeypatch.context() as patch:
                patch.setattr(matcher, "FAST", False)
                _PLAIN[tuple(paths)] = _findings(paths, "--engine", "python", "--jobs", "1", "--no-cache")
        return _PLAIN[tuple(paths)]

    return run


_PLAIN: dict[tuple[str, ...], list[Any]] = {}


CONFIGS = [
    (engine_name, jobs, cache, small)
    for engine_name in ENGINES
    for jobs in (1, 2)
    for cache in (True, False)
    for small in (True, False)
    if small or (jobs == 1 and cache)
]


@pytest.mark.parametrize(("engine_name", "jobs", "cache", "small"), CONFIGS)
def test_generated_log_findings_do_not_depend_on_speed_ups(
    corpus: Path,
    plain: Any,
    monkeypatch: pytest.MonkeyPatch,
    engine_name: str,
    jobs: int,
    cache: bool,
    small: bool,
) -> None:
    expected = plain([str(corpus)])
    assert expected, "the generated log holds incidents"
    monkeypatch.setattr(engine, "PARALLEL_MIN_BYTES", 0)  # two workers even for a few MB
    if not small:
        monkeypatch.setattr(matcher, "SMALL_INPUT", 0)
    options = ["--engine", engine_name, "--jobs", str(jobs), *([] if cache else ["--no-cache"])]
    assert _findings([str(corpus)], *options) == expected
    assert _findings([str(corpus)], *options) == expected  # again, from a warm cache


@pytest.mark.parametrize(("engine_name", "jobs", "cache", "small"), CONFIGS)
def test_fixture_findings_do_not_depend_on_speed_ups(
    plain: Any, monkeypatch: pytest.MonkeyPatch, engine_name: str, jobs: int, cache: bool, small: bool
) -> None:
    paths = _fixture_inputs()
    expected = plain(paths)
    monkeypatch.setattr(engine, "PARALLEL_MIN_BYTES", 0)
    if not small:
        monkeypatch.setattr(matcher, "SMALL_INPUT", 0)
    options = ["--engine", engine_name, "--jobs", str(jobs), *([] if cache else ["--no-cache"])]
    assert _findings(paths, *options) == expected


@pytest.mark.parametrize("fixture", _fixture_inputs(), ids=lambda path: Path(path).name)
def test_each_fixture_alike_on_every_engine(
    plain: Any, monkeypatch: pytest.MonkeyPatch, fixture: str
) -> None:
    expected = plain([fixture])
    monkeypatch.setattr(matcher, "SMALL_INPUT", 0)  # the prefilters, not the small-input path
    for engine_name in ENGINES:
        assert _findings([fixture], "--engine", engine_name) == expected, engine_name


def test_a_copied_log_is_diagnosed_like_the_original(corpus: Path, tmp_path: Path) -> None:
    """Paths differ, nothing else: the parallel merge keeps the order of the inputs."""
    copy = tmp_path / "copy"
    shutil.copytree(corpus, copy)
    strip = lambda findings: json.dumps(findings).replace(str(copy), "").replace(str(corpus), "")  # noqa: E731
    assert strip(_findings([str(copy)], "--jobs", "2")) == strip(_findings([str(corpus)], "--jobs", "1"))


@pytest.mark.parametrize("engine_name", ENGINES)
def test_a_big_file_split_across_workers_is_diagnosed_like_the_whole(
    corpus: Path, plain: Any, monkeypatch: pytest.MonkeyPatch, engine_name: str
) -> None:
    """Parts start where the whole scan cuts a block: same findings, same line numbers."""
    log = str(corpus / "rank0.log")
    monkeypatch.setattr(engine, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(parts, "PART_BYTES", 512 * 1024)
    assert len(parts.plan(log, Path(log).stat().st_size)) == 2
    assert _findings([log], "--engine", engine_name, "--jobs", "2") == plain([log])


@pytest.mark.parametrize("engine_name", ENGINES)
def test_many_small_parts_match_one_process(
    corpus: Path, monkeypatch: pytest.MonkeyPatch, engine_name: str
) -> None:
    """With 64 KiB reads and parts, the parts of a file see the blocks one process sees."""
    log = str(corpus / "rank0.log")
    monkeypatch.setattr(engine, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(scanner, "CHUNK", 64 * 1024)
    monkeypatch.setattr(parts, "CHUNK", 64 * 1024)
    monkeypatch.setattr(parts, "PART_BYTES", 64 * 1024)
    assert len(parts.plan(log, Path(log).stat().st_size)) > 10
    whole = run_cli("diagnose", "--format", "json", "--engine", engine_name, "--jobs", "1", log)
    split = run_cli("diagnose", "--format", "json", "--engine", engine_name, "--jobs", "2", log)
    assert json.loads(split.stdout)["findings"] == json.loads(whole.stdout)["findings"]
    assert json.loads(split.stdout)["inputs"] == json.loads(whole.stdout)["inputs"]


@pytest.fixture(scope="module")
def examples_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every line of every rule example and fixture, each once: the corpus holds only a sample."""
    path = tmp_path_factory.mktemp("examples") / "examples.log"
    path.write_text("\n".join(_examples()) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("engine_name", ENGINES)
def test_every_example_line_passes_the_prefilter(
    examples_log: Path, plain: Any, monkeypatch: pytest.MonkeyPatch, engine_name: str
) -> None:
    monkeypatch.setattr(matcher, "SMALL_INPUT", 0)
    expected = plain([str(examples_log)])
    assert len(expected) > 30
    assert _findings([str(examples_log)], "--engine", engine_name) == expected
