"""Settings from flags and environment: the only module that reads environment variables."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

LANGUAGES = ("en", "zh")
# The `diagnose` options that can also be set from the environment, by their parameter names.
DIAGNOSE_ENVIRONMENT = {"fmt": "ASCEND_DOCTOR_FORMAT", "fail_on": "ASCEND_DOCTOR_FAIL_ON"}


def default_language(environ: Mapping[str, str] | None = None) -> str:
    """`zh` when LC_ALL / LC_MESSAGES / LANG asks for Chinese, else `en`."""
    env = os.environ if environ is None else environ
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(name, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def default_log_places(environ: Mapping[str, str] | None = None) -> list[str]:
    """Where CANN writes logs, most specific first: what `diagnose` scans when given nothing."""
    env = os.environ if environ is None else environ
    places = []
    for name in ("ASCEND_PROCESS_LOG_PATH", "ASCEND_WORK_PATH"):
        if env.get(name):
            places.append(os.path.join(env[name], "log") if name == "ASCEND_WORK_PATH" else env[name])
    home = env.get("HOME") or os.path.expanduser("~")
    places += [os.path.join(home, "ascend", "log"), "/root/ascend/log", "/var/log/npu/slog"]
    unique = list(dict.fromkeys(os.path.normpath(place) for place in places))
    return [place for place in unique if os.path.isdir(place)]


DRIVER_LOG_PLACE = "/var/log/npu/slog"  # the driver's, shared by every job on the host


def job_log_places(environ: Mapping[str, str] | None = None) -> list[str]:
    """Where a job's own CANN logs go: `$ASCEND_PROCESS_LOG_PATH` when set, else the CANN log
    places but the driver's (which other jobs on the host write to as well)."""
    env = os.environ if environ is None else environ
    chosen = env.get("ASCEND_PROCESS_LOG_PATH")
    if chosen:
        return [chosen] if os.path.isdir(chosen) else []
    return [place for place in default_log_places(env) if place != DRIVER_LOG_PLACE]


def no_color_requested(environ: Mapping[str, str] | None = None) -> bool:
    """NO_COLOR set to anything non-empty turns colour off (https://no-color.org)."""
    env = os.environ if environ is None else environ
    return bool(env.get("NO_COLOR"))


def stdin_is_terminal() -> bool:
    """A terminal on stdin means nobody is piping a log in."""
    return sys.stdin is not None and sys.stdin.isatty()


def in_github_actions(environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return env.get("GITHUB_ACTIONS") == "true"


def github_step_summary(environ: Mapping[str, str] | None = None) -> str | None:
    """The file GitHub Actions renders as this step's job summary, when there is one."""
    env = os.environ if environ is None else environ
    return env.get("GITHUB_STEP_SUMMARY") or None


def environment() -> dict[str, str]:
    """A copy of the whole environment, for `check`: it examines the variables a job would inherit."""
    return dict(os.environ)


# The variables a support ticket needs to see: the job's launch, CANN, HCCL and the frameworks.
JOB_VARIABLE_PREFIXES = (
    "ASCEND_",
    "HCCL_",
    "HCCN_",
    "ACL_",
    "GE_",
    "TE_",
    "PYTORCH_NPU_",
    "TORCH_",
    "NPU_",
    "MS_",
    "GLOG_",
    "TASK_QUEUE_",
    "COMBINED_ENABLE",
    "INF_NAN_",
    "MASTER_",
    "WORLD_SIZE",
    "RANK",
    "LOCAL_RANK",
    "LOCAL_WORLD_SIZE",
    "NODE_RANK",
    "OMP_",
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
    "PYTHONPATH",
    "PATH",
    "VLLM_",
    "DEEPSPEED_",
    "SLURM_JOB_",
    "SLURM_NNODES",
    "SLURM_NODEID",
)


def job_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment variables of JOB_VARIABLE_PREFIXES, by name (their values are not yet redacted)."""
    env = os.environ if environ is None else environ
    return {name: env[name] for name in sorted(env) if name.startswith(JOB_VARIABLE_PREFIXES)}


def node_name() -> str:
    """This machine's name, as a report names the node its logs come from (`--node` overrides it).
    `os.uname` where there is one: importing `socket` costs a run ~3 ms."""
    if hasattr(os, "uname"):
        return os.uname().nodename or "localhost"
    import socket

    return socket.gethostname() or "localhost"


def utc_offset() -> str:
    """This machine's time zone as `+0800`: what a log's zone-less times most likely mean."""
    import time

    return time.strftime("%z")


def cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)
