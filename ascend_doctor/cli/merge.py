"""`ascend-doctor merge REPORT.json|DIR...`: the JSON reports of several nodes as one diagnosis."""

from __future__ import annotations

import sys
from typing import Any

import click

from ascend_doctor.cli.diagnose import exit_code, notify_inputs, write_report
from ascend_doctor.cli.options import (
    color_option,
    exit_zero_option,
    fail_on_option,
    format_option,
    lang_option,
    output_option,
)
from ascend_doctor.cli.request import DiagnoseRequest
from ascend_doctor.cluster.merge import merge
from ascend_doctor.config import default_language
from ascend_doctor.errors import InputError
from ascend_doctor.render import RENDERERS

MERGE_EPILOG = """\b
Examples:
  # on every node (Slurm, pdsh, kubectl exec: see docs/cluster.md)
  ascend-doctor diagnose ~/ascend/log /job/logs --format json -o /shared/reports/$(hostname).json --exit-zero
  # then once, anywhere
  ascend-doctor merge /shared/reports
  ascend-doctor merge /shared/reports --format markdown -o verdict.md

\b
The merge ranks every node's matches together, as one `diagnose` over all the
logs would: the verdict names the node and rank where the failure started.
Reports are taken in the order given, a directory's *.json files by name.
Every report needs schema 2 (docs/json-report.md), as `diagnose --format json`
writes it; one that cannot be merged is listed with what to do and makes the exit
code 2, and the rest are still merged. Rules that rank differently in two reports (other versions or
--rules) stop the merge.

\b
Exit codes: 0 nothing to fix found, 1 a cause was found (at or above --fail-on),
2 a report could not be read or merged.
"""


@click.command("merge", epilog=MERGE_EPILOG)
@click.argument("paths", nargs=-1, required=True, metavar="REPORT.json|DIR...")
@format_option(sorted(RENDERERS))
@output_option()
@lang_option()
@fail_on_option()
@exit_zero_option("an unmergeable report")
@color_option()
def merge_command(**options: Any) -> None:
    """Merge the JSON reports of several nodes into one diagnosis, ranked as one run over all their logs."""
    request = DiagnoseRequest(**options)
    merged = merge(request.paths, lang=request.lang or default_language())
    report = merged.report
    if len(merged.unmergeable) == len(report.inputs):
        notify_inputs(report)
        raise InputError(f"nothing to merge: none of the {len(report.inputs)} report(s) could be merged")
    notify_inputs(report)
    code = exit_code(report, request.fail_on, request.exit_zero, bool(merged.unmergeable))
    write_report(report, request, report.rules, sys.stdout)
    sys.exit(int(code))
