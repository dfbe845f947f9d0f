"""Where CANN, the driver and the firmware are installed and which versions they are, read from
their version files (install_layout.md in the compat facts): never by importing anything."""

from __future__ import annotations

import glob
import os
import re
from typing import NamedTuple

from ascend_doctor.check.machine import Machine

ASCEND = "/usr/local/Ascend"
CANN_INSTALL_INFO = "/etc/Ascend/ascend_cann_install.info"  # torch_npu's env.sh reads Install_Path= here
_RUNNING = re.compile(r"^(?:toolkit|runtime)_running_version=\[[^:\]]*:([^\]]+)\]", re.MULTILINE)


class Toolkit(NamedTuple):
    """A CANN toolkit: its home (what ASCEND_HOME_PATH should be), version, and the file that said so."""

    home: str
    version: str
    source: str
    layout: str  # `ascend-toolkit` (<= 8.3) or `cann` (>= 8.5: <root>/cann-<version>)


class Driver(NamedTuple):
    version: str
    source: str
    firmware_range: str = ""  # compatible_version_fw: the firmware builds this driver accepts


class Firmware(NamedTuple):
    version: str
    source: str
    package: str = ""  # the HDK release it shipped in
    driver_range: str = ""  # compatible_version_drv: the drivers it accepts, by prefix


def key_values(path: str) -> dict[str, str]:
    """A `key=value` file (version.info, *_install.info); {} when it cannot be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read(65536).splitlines()
    except OSError:
        return {}
    pairs = (line.partition("=") for line in lines if "=" in line and not line.startswith("#"))
    return {name.strip(): value.strip().strip('"') for name, _, value in pairs}


def install_roots(machine: Machine) -> list[str]:
    """Where CANN may be: the path in ascend_cann_install.info, /usr/local/Ascend, ~/Ascend."""
    roots = []
    recorded = key_values(machine.at(CANN_INSTALL_INFO)).get("Install_Path")
    if recorded:
        roots.append(machine.at(recorded))
    roots.append(machine.at(ASCEND))
    home = machine.environ.get("HOME")
    if home:
        roots.append(os.path.join(home, "Ascend"))
    return list(dict.fromkeys(os.path.normpath(root) for root in roots))


def _homes(machine: Machine) -> list[tuple[str, str]]:
    """Candidate toolkit homes with their layout, the environment's first."""
    found = []
    for name in ("ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH"):
        value = machine.environ.get(name)
        if value:
            layout = (
                "cann" if os.path.basename(os.path.normpath(value)).startswith("cann") else "ascend-toolkit"
            )
            found.append((value, layout))
    for root in install_roots(machine):
        found.append((os.path.join(root, "ascend-toolkit", "latest"), "ascend-toolkit"))
        found.append((os.path.join(root, "cann"), "cann"))
        newest = sorted(glob.glob(os.path.join(root, "cann-*")), reverse=True)
        found += [(path, "cann") for path in newest]
    return found


def toolkit_version(home: str) -> tuple[str, str] | None:
    """(version, file) from the files a toolkit carries, most specific first."""
    for info in sorted(glob.glob(os.path.join(home, "*-linux", "ascend_*_install.info"))):
        version = key_values(info).get("version")
        if version:
            return version, info
    cfg = os.path.join(home, "version.cfg")
    try:
        with open(cfg, encoding="utf-8", errors="replace") as handle:
            running = _RUNNING.search(handle.read(65536))
    except OSError:
        running = None
    if running:
        return running.group(1), cfg
    opp = os.path.join(home, "opp", "version.info")
    version = key_values(opp).get("version_dir")
    if version:
        return version, opp
    name = os.path.basename(os.path.realpath(home))
    if os.path.isdir(home) and re.match(r"(cann-)?\d+\.\d+", name):
        return name.removeprefix("cann-"), home
    return None


def find_toolkit(machine: Machine) -> Toolkit | None:
    for home, layout in _homes(machine):
        if not os.path.isdir(home):
            continue
        found = toolkit_version(home)
        if found:
            return Toolkit(os.path.normpath(home), found[0], found[1], layout)
    return None


def find_driver(machine: Machine) -> Driver | None:
    path = machine.at(f"{ASCEND}/driver/version.info")
    info = key_values(path)
    version = info.get("Version") or info.get("package_version")
    return Driver(version, path, info.get("compatible_version_fw", "")) if version else None


def find_firmware(machine: Machine) -> Firmware | None:
    path = machine.at(f"{ASCEND}/firmware/version.info")
    info = key_values(path)
    version = info.get("Version")
    if not version:
        return None
    return Firmware(version, path, info.get("package_version", ""), info.get("compatible_version_drv", ""))
