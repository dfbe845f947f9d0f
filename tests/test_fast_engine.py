"""Why hyperscan is absent: the reason the slow-path note and `--engine hyperscan` give."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from ascend_doctor.match import fast_engine

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"
PYTHONS = [(3, minor) for minor in range(8, 17)]
PLATFORMS = [
    ("linux", "Linux", "x86_64"),
    ("linux", "Linux", "aarch64"),
    ("linux", "Linux", "ppc64le"),
    ("darwin", "Darwin", "arm64"),
    ("darwin", "Darwin", "x86_64"),
    ("win32", "Windows", "AMD64"),
    ("win32", "Windows", "ARM64"),
]


def pinned_by_pyproject(python: tuple[int, int], sys_platform: str, system: str, machine: str) -> str | None:
    dependencies = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["dependencies"]
    env = {
        "python_version": f"{python[0]}.{python[1]}",
        "python_full_version": f"{python[0]}.{python[1]}.0",
        "sys_platform": sys_platform,
        "platform_system": system,
        "platform_machine": machine,
        "os_name": "nt" if sys_platform == "win32" else "posix",
    }
    pins = [
        next(iter(req.specifier)).version
        for req in map(Requirement, dependencies)
        if req.name == "hyperscan" and (req.marker is None or req.marker.evaluate(env))
    ]
    assert len(pins) <= 1, f"{len(pins)} hyperscan pins apply at once on {env}"
    return pins[0] if pins else None


@pytest.mark.parametrize("python", PYTHONS, ids=lambda python: f"{python[0]}.{python[1]}")
@pytest.mark.parametrize("where", PLATFORMS, ids=lambda where: f"{where[0]}-{where[2]}")
def test_the_wheel_table_is_the_one_pyproject_pins(
    python: tuple[int, int], where: tuple[str, str, str]
) -> None:
    sys_platform, _system, machine = where
    assert fast_engine.pinned_wheel(python, sys_platform, machine) == pinned_by_pyproject(python, *where)


@pytest.fixture(autouse=True)
def real_hyperscan_restored() -> Iterator[None]:
    """The tests below import stand-ins named hyperscan: the real one (or none) is put back."""
    before = sys.modules.get("hyperscan")
    yield
    if before is None:
        sys.modules.pop("hyperscan", None)
    else:
        sys.modules["hyperscan"] = before


def without_hyperscan(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "hyperscan", None)  # `import hyperscan` raises ModuleNotFoundError


def test_a_platform_without_a_wheel_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    without_hyperscan(monkeypatch)
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr("platform.machine", lambda: "ppc64le")
    reason = fast_engine.hyperscan_missing()
    assert reason is not None
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert f"hyperscan has no wheel for Python {python} on Linux ppc64le" in reason
    assert "3.10-3.14 on x86-64 Linux" in reason and "pip install" not in reason


def test_a_platform_with_a_wheel_but_no_hyperscan_gets_the_pinned_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    without_hyperscan(monkeypatch)
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr("platform.machine", lambda: "x86_64")
    monkeypatch.setattr(sys, "version_info", (3, 12, 1, "final", 0))
    assert fast_engine.hyperscan_missing() == (
        "hyperscan is not installed, though it has a wheel for Python 3.12 on Linux x86_64: "
        "`pip install hyperscan==0.9.1` adds it"
    )


def test_a_hyperscan_that_fails_to_import_is_reported_with_its_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "hyperscan"
    broken.mkdir()
    (broken / "__init__.py").write_text(
        'raise ImportError("libhs.so.5: cannot open shared object file: No such file or directory")\n'
    )
    monkeypatch.delitem(sys.modules, "hyperscan", raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert fast_engine.hyperscan_missing() == (
        "hyperscan is installed but failed to import "
        "(ImportError: libhs.so.5: cannot open shared object file: No such file or directory)"
    )


def test_an_importable_hyperscan_is_not_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "hyperscan.py").write_text("")
    monkeypatch.delitem(sys.modules, "hyperscan", raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert fast_engine.hyperscan_missing() is None
