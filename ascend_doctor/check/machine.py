"""The machine a check looks at, passed in whole so that tests can build a fake one: the file-system
root, PATH, the environment, the target Python interpreter; and what that interpreter reports."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from typing import NamedTuple

# Printed by the target interpreter: its version, architecture and import path. No package is
# imported: torch alone takes seconds.
INFO_SCRIPT = (
    "import json, platform, sys; print(json.dumps({'version': platform.python_version(), "
    "'machine': platform.machine(), 'executable': sys.executable, 'path': sys.path}))"
)
INFO_TIMEOUT = 10.0


class Machine(NamedTuple):
    """Where to look. `root` prefixes the fixed install paths (/usr/local/Ascend, /dev, /etc)."""

    root: str
    path: str
    environ: Mapping[str, str]
    python: str | None = None  # None: python3 (else python) on `path`

    def at(self, absolute: str) -> str:
        """An absolute path of the machine, under `root`."""
        return os.path.join(self.root, absolute.lstrip("/"))

    def which(self, program: str) -> str | None:
        return shutil.which(program, path=self.path)

    def interpreter(self) -> str | None:
        return self.python or self.which("python3") or self.which("python")


class Interpreter(NamedTuple):
    """What the target Python said about itself, and the distributions on its import path."""

    executable: str
    version: str
    machine: str
    packages: dict[str, tuple[str, str]]  # normalised name -> (version, the directory it is in)


def normal_name(name: str) -> str:
    """PEP 503: `torch_npu`, `Torch-NPU` and `torch.npu` are one name."""
    return "-".join(name.lower().replace("_", "-").replace(".", "-").split("-"))


def distributions(path: list[str]) -> dict[str, tuple[str, str]]:
    """Name -> (version, directory) from `*.dist-info` / `*.egg-info` directory names, the first on
    the path winning as it does for `import` (the names hold the version: no file is opened)."""
    found: dict[str, tuple[str, str]] = {}
    for directory in path:
        try:
            names = os.listdir(directory or ".")
        except OSError:
            continue
        for entry in names:
            stem, dot, suffix = entry.rpartition(".")
            if not dot or suffix not in ("dist-info", "egg-info"):
                continue
            name, _, version = stem.partition("-")
            version = version.split("-", 1)[0]  # egg-info: name-version-py3.10
            if name and version:
                found.setdefault(normal_name(name), (version, directory))
    return found


def ask_interpreter(machine: Machine) -> Interpreter | str:
    """The interpreter's report, or why it could not be had."""
    program = machine.interpreter()
    if program is None:
        return "no python3 or python on PATH (use --python)"
    try:
        done = subprocess.run(
            [program, "-c", INFO_SCRIPT],
            env=dict(machine.environ),
            capture_output=True,
            text=True,
            timeout=INFO_TIMEOUT,
            check=False,
        )
        info = json.loads(done.stdout)
    except (OSError, subprocess.SubprocessError, ValueError, KeyError, TypeError) as exc:
        return f"{program} did not say what it is: {exc}"
    return Interpreter(
        executable=str(info.get("executable") or program),
        version=str(info["version"]),
        machine=str(info["machine"]),
        packages=distributions([str(entry) for entry in info["path"]]),
    )
