"""`ascend-doctor check`: examine this machine before a job runs; exit 1 when a check fails."""

from __future__ import annotations

import os
import sys

import click

from ascend_doctor.cli.options import color_option, format_option, lang_option
from ascend_doctor.config import default_language, environment, no_color_requested
from ascend_doctor.errors import ExitCode

CHECK_FORMATS = ("text", "json", "markdown", "github")
EPILOG = """\b
Examples:
  ascend-doctor check                       # this shell's python3, environment and devices
  ascend-doctor check --python ~/venv/bin/python --deep
  ascend-doctor check --format github       # a pre-flight step before training in CI

\b
Exit codes: 0 every check passed (warnings allowed), 1 a check failed at error
level or no Ascend software or device was found, 2 usage error.
"""


@click.command("check", epilog=EPILOG)
@click.option(
    "--python",
    "python",
    metavar="PATH",
    default=None,
    help="Interpreter the job will run with (default: python3 on PATH). Its packages are read from "
    "their metadata, never imported (except by --deep).",
)
@click.option(
    "--deep",
    is_flag=True,
    help="Also run a tiny job in that interpreter (import torch_npu, one op and a sync on the NPU) and "
    "diagnose what it prints, as `diagnose` would a log.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(1, 3600),
    metavar="SECONDS",
    default=120.0,
    show_default=True,
    help="Seconds the --deep probe may take.",
)
@format_option(CHECK_FORMATS)
@lang_option()
@color_option()
def check_command(
    python: str | None, deep: bool, timeout: float, fmt: str, lang: str | None, color: bool | None
) -> None:
    """Check this machine for what makes Ascend jobs fail before they start.

    \b
    Versions (Python, torch, torch_npu, CANN, driver, firmware, vllm-ascend) against a bundled
    compatibility table; the variables set_env.sh exports, LD_LIBRARY_PATH, ASCEND_RT_VISIBLE_DEVICES,
    HCCL and allocator settings, CANN's own Python packages; npu-smi (health, cards held by other
    processes), /dev/davinci access and free disk. Offline; no root needed.
    """
    from ascend_doctor.check.machine import Machine
    from ascend_doctor.check.run import run_checks
    from ascend_doctor.render.checks import CHECK_RENDERERS

    if python is not None and not os.path.exists(python):
        raise click.BadParameter(f"{python}: no such file", param_hint="--python")
    environ = environment()
    machine = Machine(root="/", path=environ.get("PATH", os.defpath), environ=environ, python=python)
    report = run_checks(machine, deep=deep, lang=lang or default_language(), probe_timeout=timeout)
    if color is None:
        color = sys.stdout.isatty() and not no_color_requested()
    renderer = CHECK_RENDERERS[fmt](color=color) if fmt == "text" else CHECK_RENDERERS[fmt]()
    renderer.render(report, sys.stdout)
    sys.exit(int(ExitCode.FOUND if report.failed else ExitCode.CLEAN))
