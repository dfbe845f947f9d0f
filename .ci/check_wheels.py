"""Prove that every hyperscan pin in pyproject.toml installs from a wheel where its marker applies.

For each Python × platform below, evaluates the markers of the `hyperscan` requirements. Where one
applies, `pip download --only-binary=:all: --no-deps` must find a wheel of that exact version (a pin
bump that would fall back to an sdist, whose build fails, fails here first). Two pins applying at
once is an error too. Exit 0 when all hold; prints one line per case.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from packaging.requirements import Requirement

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

PYTHONS = ("3.9", "3.10", "3.11", "3.12", "3.13", "3.14", "3.15")
# (sys_platform, platform_system, platform_machine, the wheel platform tags pip may use there)
PLATFORMS = (
    ("linux", "Linux", "x86_64", ("manylinux2014_x86_64", "musllinux_1_2_x86_64")),
    ("linux", "Linux", "aarch64", ("manylinux2014_aarch64", "musllinux_1_2_aarch64")),
    ("linux", "Linux", "ppc64le", ("manylinux2014_ppc64le",)),
    ("darwin", "Darwin", "arm64", ("macosx_11_0_arm64",)),
    ("darwin", "Darwin", "x86_64", ("macosx_10_15_x86_64",)),
    ("win32", "Windows", "AMD64", ("win_amd64",)),
    ("win32", "Windows", "ARM64", ("win_arm64",)),
)


def hyperscan_pins(pyproject: Path) -> list[Requirement]:
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    return [req for req in map(Requirement, project["dependencies"]) if req.name == "hyperscan"]


def has_wheel(version: str, python: str, tag: str) -> bool:
    with tempfile.TemporaryDirectory() as target:
        command = [sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "--no-deps"]
        command += ["--python-version", python, "--platform", tag, "-d", target, f"hyperscan=={version}"]
        done = subprocess.run(command, capture_output=True, text=True)
        return done.returncode == 0 and any(Path(target).glob("*.whl"))


def main() -> int:
    pins = hyperscan_pins(Path(__file__).resolve().parent.parent / "pyproject.toml")
    if not pins:
        print("no hyperscan requirement in pyproject.toml")
        return 1
    failures = 0
    for python in PYTHONS:
        for sys_platform, system, machine, tags in PLATFORMS:
            env = {
                "python_version": python,
                "python_full_version": f"{python}.0",
                "sys_platform": sys_platform,
                "platform_system": system,
                "platform_machine": machine,
                "os_name": "nt" if sys_platform == "win32" else "posix",
                "implementation_name": "cpython",
                "platform_python_implementation": "CPython",
                "extra": "",
            }
            chosen = [pin for pin in pins if pin.marker is None or pin.marker.evaluate(env)]
            where = f"Python {python} {sys_platform}/{machine}"
            if len(chosen) > 1:
                print(f"FAIL {where}: {len(chosen)} hyperscan pins apply at once")
                failures += 1
                continue
            if not chosen:
                print(f"ok   {where}: no hyperscan (pure-Python engine)")
                continue
            version = next(iter(chosen[0].specifier)).version
            for tag in tags:
                if has_wheel(version, python, tag):
                    print(f"ok   {where} [{tag}]: hyperscan {version} wheel")
                else:
                    print(f"FAIL {where} [{tag}]: no hyperscan {version} wheel; pip would build the sdist")
                    failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
