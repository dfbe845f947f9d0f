"""Whether the hyperscan engine can run here and, when it cannot, why.

hyperscan is a default dependency only where it has a wheel (pyproject.toml pins one version per
platform, see .ci/check_wheels.py). Elsewhere the pure-Python engine runs; the slow-path note and
the `--engine hyperscan` error then say which case this is — no wheel for this Python and
platform, not installed where a wheel exists, or installed but failing to import — rather than
suggest an install that cannot work.
"""

from __future__ import annotations

import sys

# The wheels pyproject.toml pins: (version, oldest and newest Python, (sys.platform, machine or
# None for any)). tests/test_fast_engine.py checks this against the markers there.
WHEELS = (
    ("0.9.1", (3, 10), (3, 14), (("linux", "x86_64"), ("darwin", None), ("win32", "AMD64"))),
    ("0.7.23", (3, 10), (3, 13), (("linux", "aarch64"),)),
)
WHERE_WHEELS = "Python 3.10-3.14 on x86-64 Linux, macOS and 64-bit Windows, 3.10-3.13 on aarch64 Linux"
_SYSTEMS = {"linux": "Linux", "darwin": "macOS", "win32": "Windows"}


def pinned_wheel(python: tuple[int, int], sys_platform: str, machine: str) -> str | None:
    """The hyperscan version a default install gets on this Python and platform, or None."""
    for version, oldest, newest, platforms in WHEELS:
        if oldest <= python <= newest and any(
            sys_platform == system and (wanted is None or machine == wanted) for system, wanted in platforms
        ):
            return version
    return None


def hyperscan_missing() -> str | None:
    """None when hyperscan imports; else why it does not, as a clause for a message."""
    try:
        import hyperscan  # noqa: F401
    except ModuleNotFoundError as exc:
        if exc.name != "hyperscan":
            return _failed(exc)
        return _not_installed()
    except Exception as exc:  # a wheel built for another system fails in its own ways
        return _failed(exc)
    return None


def _not_installed() -> str:
    import platform  # ~2 ms: only for this message, never at start-up

    python = sys.version_info[:2]
    machine = platform.machine()
    here = f"Python {python[0]}.{python[1]} on {_SYSTEMS.get(sys.platform, sys.platform)} {machine}"
    version = pinned_wheel(python, sys.platform, machine)
    if version is None:
        return f"hyperscan has no wheel for {here} (it has for {WHERE_WHEELS})"
    return (
        f"hyperscan is not installed, though it has a wheel for {here}: "
        f"`pip install hyperscan=={version}` adds it"
    )


def _failed(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    error = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
    return f"hyperscan is installed but failed to import ({error})"
