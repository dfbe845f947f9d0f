"""`ascend-doctor collect [PATH...] -o bundle.tar.gz`: one redacted archive for a bug report or a ticket."""

from __future__ import annotations

import io

import click

from ascend_doctor.cli.diagnose import require_something_read, resolve_paths, say
from ascend_doctor.cli.options import lang_option, rules_option
from ascend_doctor.cluster.bundle import Limits, write_bundle
from ascend_doctor.cluster.environment import snapshot
from ascend_doctor.cluster.redact import Redactor, redact_report
from ascend_doctor.config import (
    cpu_count,
    default_language,
    job_environment,
    node_name,
    utc_offset,
)
from ascend_doctor.engine import ScanOptions, diagnose
from ascend_doctor.errors import InputError
from ascend_doctor.model import Report
from ascend_doctor.read.sources import STDIN, expand
from ascend_doctor.render import RENDERERS
from ascend_doctor.rulebase.load import load_rulebase

COLLECT_EPILOG = """\b
Examples:
  ascend-doctor collect -o ticket.tar.gz                   # the CANN log places
  ascend-doctor collect train.log ~/ascend/log -o ticket.tar.gz --window 30
  ascend-doctor collect /job/logs -o ticket.tar.gz --redact-hosts --max-size 20

\b
The archive (ascend-doctor-bundle/) holds report.json and report.md, the log
lines from --window minutes before the first error to --window minutes after the
last, environment.json (versions, the job's CANN/HCCL/torch variables) and
MANIFEST.json, which says for every log which lines were kept and what was left
out and why. Before anything is written, tokens, keys and passwords (in
variables, command lines and JSON), Authorization headers and credentials in
URLs are replaced by [REDACTED]; --redact-hosts also replaces IP addresses and
host names with stable stand-ins (host-1, ip-2). Read the archive before you
send it: redaction finds the usual shapes of secrets, not every secret.
"""


def _documents(report: Report) -> dict[str, str]:
    rendered = {}
    for name, fmt in (("report.json", "json"), ("report.md", "markdown")):
        stream = io.StringIO()
        RENDERERS[fmt]().render(report, stream)
        rendered[name] = stream.getvalue()
    return rendered


@click.command("collect", epilog=COLLECT_EPILOG)
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@click.option("-o", "--output", required=True, metavar="FILE", help="The archive to write (.tar.gz).")
@click.option(
    "--window",
    type=click.FloatRange(min=0),
    default=10.0,
    show_default=True,
    metavar="MINUTES",
    help="Keep log lines this long before the first error and after the last.",
)
@click.option(
    "--max-size",
    type=click.FloatRange(min=0),
    default=50.0,
    show_default=True,
    metavar="MB",
    help="Most log bytes to pack, in MB; the logs of the top findings first.",
)
@click.option("--redact-hosts", is_flag=True, help="Also replace IP addresses and host names.")
@click.option(
    "--node", default=None, metavar="NAME", help="The machine's name in the report (default: host name)."
)
@rules_option()
@lang_option()
def collect_command(
    paths: tuple[str, ...],
    output: str,
    window: float,
    max_size: float,
    redact_hosts: bool,
    node: str | None,
    rules_dirs: tuple[str, ...],
    lang: str | None,
) -> None:
    """Pack the report, the logs around the failure, versions and environment into one redacted archive."""
    if STDIN in paths:
        raise InputError("collect reads files and directories, not stdin: save the log to a file first")
    targets = resolve_paths(paths)
    items = expand(targets)
    options = ScanOptions(jobs=cpu_count(), lang=lang or default_language())
    report = diagnose(targets, load_rulebase(rules_dirs), options, items=items)
    require_something_read(report, implicit_stdin=False)
    report = report._replace(node=node or node_name(), utc_offset=utc_offset())
    redact = Redactor(redact_hosts, [report.node, node_name()])
    clean = redact_report(report, redact)
    environment = snapshot(job_environment())
    limits = Limits(window * 60, int(max_size * 1024 * 1024))
    record = write_bundle(output, report, items, _documents(clean), environment, limits, redact)
    kept = [log for log in record["logs"] if log["kept"]]
    size = sum(log["bytes"] for log in kept)
    say(
        f"ascend-doctor: wrote {output}: {len(kept)} of {len(record['logs'])} log(s), {size:,} bytes of "
        f"log lines, {record['redacted'].get('secret', 0)} secret(s) redacted; MANIFEST.json lists the rest"
    )
