"""The rule and matcher caches: a warm cache gives the same rules, and never stale or foreign ones."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ascend_doctor import cache as cache_module
from ascend_doctor.cache import read_cache, write_cache
from ascend_doctor.rulebase import load
from ascend_doctor.rulebase.load import load_rulebase
from tests.test_user_rules import GOOD_RULE, rules_dir


def _titles(directory: Path) -> list[str]:
    return [rule.title.en for rule in load_rulebase([str(directory)], bundled=False).rules]


def test_a_warm_cache_is_used_instead_of_the_rule_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = rules_dir(tmp_path, GOOD_RULE)
    first = load_rulebase([str(directory)], bundled=False)

    def unexpected(path: str) -> list:
        raise AssertionError(f"{path} was parsed again")

    monkeypatch.setattr(load, "load_file", unexpected)
    assert load_rulebase([str(directory)], bundled=False) == first


def test_an_edited_rule_file_is_read_again(tmp_path: Path) -> None:
    directory = rules_dir(tmp_path, GOOD_RULE)
    assert _titles(directory) == ["Our data loader crashed"]
    rules_dir(tmp_path, GOOD_RULE.replace("Our data loader crashed", "The loader crashed"))
    assert _titles(directory) == ["The loader crashed"]


def test_a_cache_file_holding_another_key_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Cache file names are short checksums: two keys may share one, and must not share values.
    monkeypatch.setattr(cache_module, "_cache_file", lambda kind, key: str(tmp_path / f"{kind}.pickle"))
    write_cache("rules", "first rule files", ["first"])
    assert read_cache("rules", "second rule files") is None
    assert read_cache("rules", "first rule files") == ["first"]


def test_a_corrupt_cache_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    directory = rules_dir(tmp_path, GOOD_RULE)
    _titles(directory)
    written = list(Path(cache_module.cache_dir()).iterdir())
    assert [path.name[:6] for path in written] == ["rules-"]
    written[0].write_bytes(b"\x80\x05not a pickle")
    assert _titles(directory) == ["Our data loader crashed"]
    assert written[0].read_bytes() != b"\x80\x05not a pickle"  # and written again


def test_the_cache_files_used_last_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache = Path(cache_module.cache_dir())
    cache.mkdir()
    old = [cache / f"rules-{number:024x}.pickle" for number in range(cache_module.KEEP_PER_KIND + 2)]
    for age, path in enumerate(old):
        path.write_bytes(b"")
        os.utime(path, ns=(10**18 - age * 10**12,) * 2)  # old[0] the newest
    write_cache("rules", "rule files used today", ["used"])
    used = set(cache.iterdir()) - set(old)
    for path in used:
        os.utime(path, ns=(10**17,) * 2)  # written long ago, older than all the others
    assert read_cache("rules", "rule files used today") == ["used"]
    (cache / "matcher-0.pickle").write_bytes(b"")
    write_cache("rules", "new rule files", ["new"])
    rules = {path.name for path in cache.iterdir() if path.name.startswith("rules-")}
    assert len(rules) == cache_module.KEEP_PER_KIND
    assert {path.name for path in used} | {
        path.name for path in old[: cache_module.KEEP_PER_KIND - 2]
    } < rules
    assert read_cache("rules", "new rule files") == ["new"]
    assert read_cache("rules", "rule files used today") == ["used"]
    assert (cache / "matcher-0.pickle").exists()  # other kinds are pruned on their own writes


def test_temporaries_of_killed_writers_are_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache = Path(cache_module.cache_dir())
    cache.mkdir()
    abandoned, writing = cache / "rules-0.111.tmp", cache / "rules-1.222.tmp"
    for path in (abandoned, writing):
        path.write_bytes(b"half a pickle")
    os.utime(abandoned, ns=(10**18,) * 2)
    write_cache("rules", "rule files", ["rules"])
    assert not abandoned.exists()
    assert writing.exists()  # another process may still be writing it
