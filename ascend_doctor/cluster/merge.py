"""Node reports in, one ranked Report out: the same ranking as one run over every node's logs.

Each node's JSON report (schema 2) carries every match its ranking saw and the rules that made
them. The merge puts them back together as matches of one run (the inputs in the order the reports
were given, a directory's reports by name, as `diagnose` walks one) and ranks them with the same
code, `ranking.rank`; nothing is re-scored here. Paths become `node:path`, so that two machines'
`~/ascend/log/...` stay apart.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from ascend_doctor import __version__, outcome, uncaught
from ascend_doctor.cluster.wire import SCHEMA_VERSION
from ascend_doctor.engine import earlier_runs_warning
from ascend_doctor.errors import InputError
from ascend_doctor.gpu_job import as_gpu_job, gpu_only
from ascend_doctor.model import (
    Confidence,
    EnvRemedy,
    Evidence,
    Examples,
    InputRecord,
    Kind,
    Match,
    Raised,
    Report,
    Rule,
    Severity,
    Text,
)
from ascend_doctor.ranking import earlier_runs, rank, waited_for

# The built-in findings (the exception a job died of, its exit noise): decided again over all nodes.
REDECIDED_IDS = frozenset(rule.id for rule in (*uncaught.RULES, *outcome.RULES))

# What decides where a rule's matches rank: rules of one id must agree on these to be merged.
RANKING_FIELDS = ("category", "severity", "confidence", "kind")


class Unmergeable(Exception):
    """A report that cannot be merged; the message says why and what to do."""


class NodeReport(NamedTuple):
    """One report as read back: where it came from and what it holds."""

    source: str
    node: str
    version: str
    merged: bool
    data: dict[str, Any]


class Merged(NamedTuple):
    """The merged report, and the report files that could not be merged (each also in its inputs)."""

    report: Report
    unmergeable: tuple[str, ...]


def report_files(paths: Sequence[str]) -> Iterator[str]:
    """The report files named, a directory's `*.json` files by name, each file once."""
    seen: set[tuple[int, int]] = set()
    for path in paths:
        if not os.path.isdir(path):
            names = [(path, _identity(path))]
        else:
            device = os.stat(path).st_dev
            with os.scandir(path) as entries:
                found = sorted((e.name, e.inode()) for e in entries if e.name.endswith(".json"))
            if not found:
                raise InputError(f"no report (*.json) in the directory {path}")
            names = [(os.path.join(path, name), (device, inode)) for name, inode in found]
        for name, identity in names:
            if identity not in seen:
                seen.add(identity)
                yield name


def _identity(path: str) -> tuple[int, int]:
    """What tells one file from another however it is named; a file that cannot be stat'ed is itself."""
    try:
        info = os.stat(path)
    except OSError:
        return (-1, hash(path))
    return (info.st_dev, info.st_ino)


def read_report(path: str) -> NodeReport:
    """A report file checked for what a merge needs; Unmergeable says why it cannot be merged."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as exc:
        raise Unmergeable(f"cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise Unmergeable(f"not a JSON report ({exc})") from None
    if not isinstance(data, dict) or (data.get("tool") or {}).get("name") != "ascend-doctor":
        raise Unmergeable("not an ascend-doctor JSON report (`diagnose --format json` writes them)")
    version = str(data["tool"].get("version", "?"))
    schema = data.get("schema_version")
    if schema != SCHEMA_VERSION:
        raise Unmergeable(_schema_message(schema, version))
    node = data.get("node") or os.path.splitext(os.path.basename(path))[0]
    return NodeReport(path, str(node), version, data.get("node") is None and _any_node(data), data)


def _any_node(data: dict[str, Any]) -> bool:
    return any(item.get("node") for item in data.get("inputs", ()))


def _schema_message(schema: object, version: str) -> str:
    if isinstance(schema, int) and schema > SCHEMA_VERSION:
        return (
            f"written by a newer ascend-doctor ({version}, report schema {schema}); this one "
            f"({__version__}) merges schema {SCHEMA_VERSION}: upgrade it where you merge"
        )
    return (
        f"report schema {schema} (ascend-doctor {version}) lacks the matches a merge needs: "
        f"diagnose that node again with ascend-doctor {__version__} (`--format json`)"
    )


def _text(value: Any) -> Text:
    return Text(str(value.get("en", "")), str(value.get("zh", "")))


def rule_of(rule_id: str, data: dict[str, Any]) -> Rule:
    """A rule as a report describes it: enough to rank its matches and to report it."""
    return Rule(
        id=rule_id,
        category=str(data["category"]),
        severity=Severity(data["severity"]),
        confidence=Confidence(data["confidence"]),
        kind=Kind(data["kind"]),
        title=_text(data["title"]),
        cause=_text(data["cause"]),
        fix=_text(data["fix"]),
        env=tuple(EnvRemedy(str(e["name"]), str(e["value"]), _text(e["why"])) for e in data.get("env", ())),
        patterns=(),
        examples=Examples((), ()),
    )


class _Merger:
    """Collects the reports' inputs, matches and rules in order, as one run would have them."""

    def __init__(self) -> None:
        self.inputs: list[InputRecord] = []
        self.matches: list[Match] = []
        self.rules: dict[str, tuple[Rule, NodeReport]] = {}
        self.warnings: list[str] = []
        self.read: dict[tuple[str, str], str] = {}  # (node, path) -> the report that had it
        self.rule_count = 0

    def add(self, report: NodeReport) -> None:
        """One report's rules, inputs and matches; Unmergeable (and nothing added) if it is malformed."""
        try:
            rules = {key: self._rule(key, item, report) for key, item in report.data["rules_matched"].items()}
            start = len(self.inputs)
            inputs = [self._input(report, item, start + n) for n, item in enumerate(report.data["inputs"])]
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            problem = f"{type(exc).__name__} {exc}"
            raise Unmergeable(f"not a valid schema {SCHEMA_VERSION} report: {problem}") from None
        for rule in rules.values():
            self.rules.setdefault(rule.id, (rule, report))
        for record, matches in inputs:
            self.inputs.append(record)
            self.matches.extend(matches)
            self.read.setdefault((record.node, record.path), report.source)
        self.rule_count = max(self.rule_count, int(report.data.get("rules") or 0))
        run_warning = (report.data.get("runs") or {}).get("warning")
        prefix = "" if report.merged else f"{report.node}: "
        self.warnings += [prefix + w for w in report.data.get("warnings", ()) if w != run_warning]

    def _input(self, report: NodeReport, item: dict[str, Any], index: int) -> tuple[InputRecord, list[Match]]:
        node = str(item["node"]) if report.merged else report.node
        path = str(item["path"]) if report.merged else f"{node}:{item['path']}"
        notes = tuple(str(note) for note in item.get("notes", ()))
        earlier = self.read.get((node, path))
        if earlier is not None:
            reason = f"read already, in the report {earlier}"
            return InputRecord(path, "skipped", reason, node=node), []
        if item["status"] == "skipped":
            return InputRecord(path, "skipped", str(item.get("reason", "")), notes=notes, node=node), []
        record = InputRecord(
            path,
            "read",
            "",
            int(item["lines"]),
            int(item["bytes"]),
            notes,
            tuple(_raised(raised, path) for raised in item.get("raised", ())),
            int(item.get("world_size") or 0),
            bool(item.get("ascend_seen")),
            str(item.get("foreign_seen") or ""),
            node,
        )
        rules = report.data["rules_matched"]
        hits = [hit for hit in item["hits"] if hit[0] not in REDECIDED_IDS]
        return record, [self._match(hit, path, index, rules) for hit in hits]

    @staticmethod
    def _match(hit: list[Any], path: str, index: int, rules: dict[str, Any]) -> Match:
        rule_id, line, rank_, stamp = hit[:4]
        if rule_id not in rules:
            raise KeyError(f"match of rule {rule_id}, which rules_matched does not describe")
        text = str(hit[4]) if len(hit) > 4 and hit[4] is not None else ""
        captures = tuple((str(k), str(v)) for k, v in hit[5].items()) if len(hit) > 5 and hit[5] else ()
        quoted = str(hit[6]) if len(hit) > 6 and hit[6] else ""
        repeats = int(hit[7]) if len(hit) > 7 and hit[7] else 0
        stamp = float(stamp) if stamp is not None else None
        evidence = Evidence(path, int(line), text, None if rank_ is None else int(rank_), stamp, captures)
        return Match(rule_id, 0, evidence, index, quoted=quoted, repeats=repeats)

    def _rule(self, rule_id: str, data: dict[str, Any], report: NodeReport) -> Rule:
        """The rule a report describes: the one met first, when the two rank alike (read only once:
        4,096 reports describe the same few rules); InputError when they do not."""
        known = self.rules.get(rule_id)
        if known is None:
            return rule_of(rule_id, data)
        rule, where = known
        if all(data[name] == getattr(rule, name) for name in RANKING_FIELDS):  # str enums equal their values
            return rule
        differ = [name for name in RANKING_FIELDS if data[name] != getattr(rule, name)]
        raise InputError(
            f"rule {rule_id} ranks differently in {where.source} (ascend-doctor {where.version}) "
            f"and {report.source} (ascend-doctor {report.version}): its {', '.join(differ)} differ; "
            "diagnose every node with one version and one set of --rules, then merge"
        )


def _version_warnings(reports: Sequence[tuple[str, str, str]]) -> list[str]:
    """Warnings for reports of several tool versions or time zones, from (version, node, zone)."""
    versions: dict[str, list[str]] = {}
    offsets: dict[str, list[str]] = {}
    for version, node, offset in reports:
        versions.setdefault(version, []).append(node)
        if offset:
            offsets.setdefault(offset, []).append(node)
    warnings = []
    if len(versions) > 1:
        warnings.append(
            "the reports come from different ascend-doctor versions ("
            + "; ".join(f"{v}: {_some(nodes)}" for v, nodes in sorted(versions.items()))
            + "); their rules agree on how they rank, but a newer version may know causes an older one missed"
        )
    if len(offsets) > 1:
        warnings.append(
            "the nodes run in different time zones ("
            + "; ".join(f"UTC{o}: {_some(nodes)}" for o, nodes in sorted(offsets.items()))
            + "); log times are compared as written, so which rank failed first may be wrong"
        )
    return warnings


def _raised(item: dict[str, Any], path: str) -> Raised:
    rank_, stamp = item.get("rank"), item.get("time")
    captures = tuple((str(k), str(v)) for k, v in (item.get("captures") or {}).items())
    evidence = Evidence(
        path,
        int(item["line"]),
        str(item["text"]),
        None if rank_ is None else int(rank_),
        None if stamp is None else float(stamp),
        captures,
    )
    return Raised(
        evidence,
        str(item["name"]),
        str(item["message"]),
        int(item["start"]),
        int(item["end"]),
        str(item.get("frame") or ""),
        int(item.get("chain") or 0),
    )


def _some(names: Sequence[str]) -> str:
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def merge(paths: Sequence[str], lang: str = "en") -> Merged:
    """Merge the reports at `paths` (files, or directories of `*.json`) into one ranked report."""
    merger = _Merger()
    merged: list[tuple[str, str, str]] = []  # (version, node, zone): not the documents, which are big
    unmergeable: list[str] = []
    for path in report_files(paths):
        try:
            report = read_report(path)
            merger.add(report)
        except Unmergeable as exc:
            unmergeable.append(path)
            merger.inputs.append(InputRecord(path, "skipped", f"cannot merge this report: {exc}"))
            continue
        merged.append((report.version, report.node, str(report.data.get("utc_offset") or "")))
    rules: Sequence[Rule] = [
        *(rule for rule, _ in merger.rules.values() if rule.id not in REDECIDED_IDS),
        *uncaught.RULES,
    ]
    merger.matches, rules = outcome.at_exit(
        merger.inputs, *uncaught.with_death(merger.inputs, merger.matches, rules)
    )
    peer = waited_for(merger.matches, rules)
    earlier = earlier_runs(merger.matches, rules)
    warnings = _version_warnings(merged)
    if earlier is not None:
        warnings.append(earlier_runs_warning(earlier, merger.inputs))
    report = Report(
        findings=as_gpu_job(
            rank(merger.matches, rules, peer, earlier), gpu_only(merger.inputs, merger.matches)
        ),
        inputs=tuple(merger.inputs),
        warnings=tuple(warnings + merger.warnings),
        tool_version=__version__,
        rule_count=merger.rule_count,
        lang=lang,
        waited_for=peer,
        matches=tuple(merger.matches),
        rules=tuple(rules),
    )
    return Merged(report, tuple(unmergeable))
