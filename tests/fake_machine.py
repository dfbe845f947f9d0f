"""A fake Ascend machine in a temporary directory: CANN, driver and firmware version files in each
layout, a fake `npu-smi` printing real-format output, a fake Python interpreter with its own
site-packages, and the environment variables of a sourced set_env.sh (or not)."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

from ascend_doctor.check.machine import Machine
from tests.conftest import FIXTURES

SMI = FIXTURES / "machine"
ASCEND = "usr/local/Ascend"
# CANN's own Python packages (the 8.0 install guide's list), all present unless a test removes one.
CANN_DEPS = ("numpy", "decorator", "sympy", "cffi", "protobuf", "attrs", "PyYAML", "pathlib2", "scipy")
CANN_DEPS += ("requests", "psutil", "absl_py", "Cython")


def _executable(path: Path, text: str) -> None:
    path.write_text(text, "utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


class FakeMachine:
    """Build a machine step by step, then `.machine()` to check it."""

    def __init__(self, tmp: Path) -> None:
        self.root = tmp / "root"
        self.bin = tmp / "bin"
        self.site = tmp / "site-packages"
        self.home = tmp / "home"
        for directory in (self.root, self.bin, self.site, self.home):
            directory.mkdir(parents=True, exist_ok=True)
        self.environ: dict[str, str] = {"HOME": str(self.home)}
        self.python_machine = "x86_64"
        self.toolkit: Path | None = None

    # -- CANN -----------------------------------------------------------------------------------
    def legacy_toolkit(self, version: str, *, info_file: bool = True) -> Path:
        """<root>/ascend-toolkit/<version> with `latest` linking to it (CANN <= 8.3)."""
        base = self.root / ASCEND / "ascend-toolkit"
        home = base / version
        self._toolkit_dirs(home)
        (base / "latest").symlink_to(version)
        (base / "set_env.sh").write_text("# set_env.sh\n")
        if info_file:
            (home / "x86_64-linux").mkdir()
            (home / "x86_64-linux" / "ascend_toolkit_install.info").write_text(
                "package_name=Ascend-cann-toolkit\n"
                f"version={version}\n"
                "innerversion=V100R001C23SPC002B210\n"
                "compatible_version=[V100R001C15],[V100R001C18],[V100R001C19],[V100R001C20]\n"
                "arch=x86_64\nos=linux\n"
                f"path={home}/x86_64-linux\n"
            )
        else:
            (home / "version.cfg").write_text(
                "# version: 1.0\n"
                f"runtime_running_version=[7.6.0.1.220:{version}]\n"
                f"compiler_running_version=[7.6.0.1.220:{version}]\n"
                f"toolkit_running_version=[7.6.0.1.220:{version}]\n"
            )
        self.toolkit = base / "latest"
        return self.toolkit

    def cann_toolkit(self, version: str) -> Path:
        """<root>/cann-<version> (CANN >= 8.5), with only opp/version.info to say its version."""
        home = self.root / ASCEND / f"cann-{version}"
        self._toolkit_dirs(home)
        (home / "opp" / "version.info").write_text(
            f"Version={version}.2.220\nversion_dir={version}\ntimestamp=20251201_000000000\n"
        )
        self.toolkit = home
        return home

    @staticmethod
    def _toolkit_dirs(home: Path) -> None:
        for sub in ("opp", "runtime", "compiler", "lib64"):
            (home / sub).mkdir(parents=True, exist_ok=True)

    def source_set_env(self) -> None:
        """The variables set_env.sh exports, for the toolkit built last and the driver."""
        assert self.toolkit is not None
        home = str(self.toolkit)
        driver = self.root / ASCEND / "driver" / "lib64"
        libs = [f"{home}/lib64"]
        if driver.is_dir():
            libs += [str(driver), str(driver / "common"), str(driver / "driver")]
        self.environ.update(
            ASCEND_TOOLKIT_HOME=home,
            ASCEND_HOME_PATH=home,
            ASCEND_OPP_PATH=f"{home}/opp",
            ASCEND_AICPU_PATH=home,
            LD_LIBRARY_PATH=":".join(libs),
        )

    # -- driver, firmware, devices ------------------------------------------------------------
    def driver(self, version: str, firmware_range: str = "[7.0.0,7.5.99]") -> None:
        directory = self.root / ASCEND / "driver"
        for sub in ("lib64/common", "lib64/driver"):
            (directory / sub).mkdir(parents=True, exist_ok=True)
        (directory / "version.info").write_text(
            f"Version={version}\nascendhal_version=7.35.23\naicpu_version=1.0\ntdt_version=1.0\n"
            "Innerversion=V100R001C18SPC001B233\n"
            "compatible_version=[V100R001C30],[V100R001C13],[V100R001C15],[V100R001C17],[V100R001C18]\n"
            f"compatible_version_fw={firmware_range}\npackage_version={version}\n"
        )

    def firmware(self, version: str, package: str, driver_range: str) -> None:
        directory = self.root / ASCEND / "firmware"
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "version.info").write_text(
            f"Version={version}\nfirmware_version=1.0\npackage_version={package}\n"
            f"compatible_version_drv={driver_range}\n"
        )

    def npu_smi(self, sample: str) -> None:
        """A fake `npu-smi` on PATH printing fixtures/machine/npu-smi-<sample>.txt."""
        text = (SMI / f"npu-smi-{sample}.txt").read_text("utf-8")
        (self.bin / "npu-smi.out").write_text(text)
        failing = "no-device" in sample
        _executable(
            self.bin / "npu-smi", f"#!/bin/sh\ncat '{self.bin}/npu-smi.out'\nexit {1 if failing else 0}\n"
        )

    def dev_nodes(self, cards: int) -> None:
        dev = self.root / "dev"
        dev.mkdir(exist_ok=True)
        for name in [f"davinci{n}" for n in range(cards)] + ["davinci_manager", "devmm_svm", "hisi_hdc"]:
            (dev / name).write_text("")

    # -- Python ------------------------------------------------------------------------------
    def packages(self, **versions: str) -> None:
        """`torch="2.1.0", torch_npu="2.1.0.post10"`: a dist-info directory each."""
        for name, version in versions.items():
            (self.site / f"{name}-{version}.dist-info").mkdir(exist_ok=True)

    def cann_deps(self, *, without: tuple[str, ...] = ()) -> None:
        self.packages(**{name: "1.0" for name in CANN_DEPS if name not in without})

    def python(self, probe_output: str = "ascend-doctor probe: ok\n", probe_exit: int = 0) -> Path:
        """A fake interpreter: `-c` with the info script prints its facts; the probe prints `probe_output`."""
        info = {"version": "3.10.14", "machine": self.python_machine, "path": [str(self.site)]}
        (self.bin / "probe.out").write_text(probe_output, "utf-8")
        script = (
            f"#!{sys.executable}\n"
            "import json, sys\n"
            "code = sys.argv[2] if len(sys.argv) > 2 else ''\n"
            "if 'torch_npu' in code:\n"
            f"    sys.stdout.write(open({str(self.bin / 'probe.out')!r}, encoding='utf-8').read())\n"
            f"    sys.exit({probe_exit})\n"
            f"info = {json.dumps(info)}\n"
            "info['executable'] = sys.argv[0]\n"
            "print(json.dumps(info))\n"
        )
        path = self.bin / "python3"
        _executable(path, script)
        return path

    def machine(self) -> Machine:
        if not (self.bin / "python3").exists():
            self.python()
        return Machine(root=str(self.root), path=str(self.bin), environ=dict(self.environ), python=None)


def healthy(tmp: Path) -> FakeMachine:
    """CANN 8.0.0 (legacy layout), driver 24.1.0 and a firmware that fit, torch 2.1.0 with torch_npu
    2.1.0.post10, two healthy 910B2 cards, set_env.sh sourced."""
    fake = FakeMachine(tmp)
    fake.legacy_toolkit("8.0.0")
    fake.driver("24.1.0", "[7.0.0,7.5.99]")
    fake.firmware("7.5.0.1.129", "24.1.0", "[23.0.0,23.0.0.],[24.0,24.0.],[24.1,24.1.]")
    fake.npu_smi("a2-healthy")
    fake.dev_nodes(2)
    fake.packages(torch="2.1.0", torch_npu="2.1.0.post10")
    fake.cann_deps()
    fake.source_set_env()
    return fake
