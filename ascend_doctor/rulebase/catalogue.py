"""The CANN error-code catalogue (catalogue.json, written by scripts/gen_catalogue.py): look a code
up, and turn the generic `catalogue.*` rules' matches into one finding per code.

The file is read only when a query or a log line needs it: a plain diagnosis of a log without a
catalogued code never opens it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from ascend_doctor.model import Confidence, Examples, Kind, Match, Rule, Severity, Text
from ascend_doctor.regexes import regex

# The rules of rules/catalogue.yaml: their matches carry the code in the `code` capture.
FINDER_IDS = frozenset({"catalogue.error-code", "catalogue.numeric-code"})
CATCH_ALL = frozenset({"needs_more_evidence", "not_ascend"})
# A small number is a code only on a line that names the system it belongs to: `error code is 7`
# after an HCCL call is HCCL_E_UNAVAIL, but `errno=2` of a file open is no CANN code at all.
SMALL = 100
_SYSTEM_WORDS = {"HCCL": ("hccl",), "driver": ("drv", "hal", "driver", "dcmi")}
_HINT = regex(r"(?i)^\s*(?:#|//|--|;)|\bhint\b|\btip:|if you see|e\.g\.|for example|such as|see also")
_WARNING = regex(r"\[WARNING\]|\bWARN(?:ING)?\b|\bW\d{5}\b|(?<![A-Za-z0-9_])W[0-9A-Z]\d{4}(?![A-Za-z0-9_])")
_ERROR = regex(r"(?i)\berror|\bfail|exception|\babort|\bE[0-9A-Z]\d{4}\b")


class Entry(NamedTuple):
    """One catalogued code: facts from CANN, our category and what to check next."""

    code: str
    system: str
    group: str
    title: str
    messages: tuple[str, ...]
    category: str
    advice: Text
    source: str
    aliases: tuple[str, ...] = ()
    hex: str = ""
    maps_to: str = ""
    status: str = ""

    @property
    def meaning(self) -> str:
        """What the code means: the text CANN prints, else its enum name spelled out."""
        if self.messages:
            return self.messages[0]
        words = re.sub(
            r"^(?:ACL_ERROR_|ACLNN_ERR_|DRV_ERROR_|DCMI_ERR_CODE_|HCCL_E_)(?:RT_|GE_)?", "", self.title
        )
        return words.replace("_", " ").lower()


class _Catalogue(NamedTuple):
    entries: tuple[Entry, ...]
    by_code: dict[str, tuple[Entry, ...]]
    by_value: dict[int, tuple[Entry, ...]]


@lru_cache(maxsize=1)
def _load() -> _Catalogue:
    import json

    # A plain path: importing importlib.resources would cost more than reading the file.
    with open(os.path.join(os.path.dirname(os.path.realpath(__file__)), "catalogue.json"), "rb") as handle:
        data = json.loads(handle.read())
    advice = {key: Text(**text) for key, text in data["advice"].items()}
    # Rows of: code, system, class, title, messages, category, advice, source, aliases, hex,
    # maps_to, status (scripts/gen_catalogue.py FIELDS + OPTIONAL).
    entries = tuple(_entry(row, advice, data["sources"]) for row in data["codes"])
    by_code: dict[str, list[Entry]] = {}
    by_value: dict[int, list[Entry]] = {}
    for entry in entries:
        for name in (entry.code, *entry.aliases, entry.hex):
            if name:
                by_code.setdefault(name.upper(), []).append(entry)
        for form in (entry.code, entry.hex):
            value = _number(form)
            if value is not None:
                by_value.setdefault(value, []).append(entry)
    return _Catalogue(
        entries,
        {key: tuple(dict.fromkeys(found)) for key, found in by_code.items()},
        {key: tuple(dict.fromkeys(found)) for key, found in by_value.items()},
    )


def _entry(row: list[Any], advice: dict[str, Text], sources: list[str]) -> Entry:
    code, system, group, title, messages, category, key, source, aliases, hex_, maps_to, status = row
    return Entry(
        code, system, group, title, tuple(messages), category, advice[key], sources[source],
        tuple(aliases or ()), hex_, maps_to, status,
    )  # fmt: skip


def _number(text: str) -> int | None:
    """A code's value: decimal (`507015`, `-8001`) or hex (`0x26`); None for a letter code."""
    if not text[:1].isdigit() and text[:1] != "-":
        return None  # most codes are letter codes: no exception raised and caught for each
    try:
        return int(text, 16) if text.lower().startswith("0x") else int(text)
    except ValueError:
        return None


def entries() -> tuple[Entry, ...]:
    """Every catalogued code, in catalogue order."""
    return _load().entries


def lookup(query: str) -> tuple[Entry, ...]:
    """Every entry a user's query can mean: the code or an enum name in any case, `retCode=0x26`
    or `0X26`, and a number in decimal or hex (38 finds 0x26). Several systems can share a number."""
    text = re.sub(
        r"(?i)^\s*(?:ret ?code|ret|err ?code|error ?code|acl ?error|errno)\s*[:=]?\s*", "", query
    ).strip()
    catalogue = _load()
    found = catalogue.by_code.get(text.upper(), ())
    value = _number(text)
    if value is not None:
        found = tuple(dict.fromkeys((*found, *catalogue.by_value.get(value, ()))))
    return found


def _in_log(code: str, line: str) -> tuple[Entry, ...]:
    """What a code found in a log line means: letter codes by name; numbers in the form they were
    printed (`0x26` is a TS code, `38` is not), small ones only where the line names the system."""
    catalogue = _load()
    if code[:1].isalpha():
        return catalogue.by_code.get(code.upper(), ())
    value = _number(code)
    if value is None:
        return ()
    printed_hex = code.lower().startswith("0x")
    found = [
        entry
        for entry in catalogue.by_value.get(value, ())
        if printed_hex == (entry.code.lower().startswith("0x") or entry.hex.lower() == code.lower())
    ]
    if abs(value) < SMALL and not printed_hex:
        lowered = line.lower()
        found = [e for e in found if any(word in lowered for word in _SYSTEM_WORDS.get(e.system, ()))]
    return tuple(found)


def severity_of(line: str) -> Severity:
    """A hint or comment that quotes a code is a note; a warning line or W code a warning; else an error."""
    if _HINT.search(line):
        return Severity.INFO
    if _WARNING.search(line) and not _ERROR.search(_WARNING.sub("", line)):
        return Severity.WARNING
    return Severity.ERROR


class _Explained(NamedTuple):
    """What the rules that fired already say, which a catalogue finding must not repeat."""

    codes: frozenset[str]  # the codes their `codes:` lists name
    categories: frozenset[str]  # their cause categories (not the catch-alls)
    lines: dict[tuple[int, int], bool]  # (input, line) -> whether a cause-category rule matched it

    def covers_as_printed(self, code: str, where: tuple[int, int]) -> bool:
        """What covers() can tell without the catalogue: a rule lists the code as printed, or a rule
        of a cause category matched its line. Most logs stop here and never read the file."""
        return code.upper() in self.codes or self.lines.get(where, False)

    def covers(self, code: str, meanings: Sequence[Entry], where: tuple[int, int]) -> bool:
        """A rule lists the code (as printed or by its catalogue name), or tells its category, or
        matched its line: a rule of a cause category always wins the line; a catch-all rule wins it
        unless the code names a cause."""
        if self.covers_as_printed(code, where) or {entry.code.upper() for entry in meanings} & self.codes:
            return True
        category = _category(meanings)
        return category in self.categories or (where in self.lines and category in CATCH_ALL)


def _explained(matches: Sequence[Match], rules: dict[str, Rule]) -> _Explained:
    fired = [rules[m.rule_id] for m in matches if m.rule_id not in FINDER_IDS]
    lines: dict[tuple[int, int], bool] = {}
    for match in matches:
        if match.rule_id not in FINDER_IDS:
            where = (match.input_index, match.evidence.line)
            lines[where] = lines.get(where, False) or rules[match.rule_id].category not in CATCH_ALL
    return _Explained(
        frozenset(code.upper() for rule in fired for code in rule.codes),
        frozenset(rule.category for rule in fired) - CATCH_ALL,
        lines,
    )


def _category(meanings: Sequence[Entry]) -> str:
    """The category the meanings agree on, else the catch-all."""
    found = {entry.category for entry in meanings}
    return found.pop() if len(found) == 1 else "needs_more_evidence"


def specialise(matches: Sequence[Match], rules: Sequence[Rule]) -> tuple[list[Match], tuple[Rule, ...]]:
    """The matches with each catalogue match renamed to its code's own rule (`catalogue.EL0004`),
    and the rules with those added. A catalogue match is dropped when its code is not catalogued
    (in the form printed) or a rule that fired already explains it (_Explained.covers); a hint
    line's match is dropped when the code is also on a real line."""
    by_id = {rule.id: rule for rule in rules}
    found = [m for m in matches if m.rule_id in FINDER_IDS]
    if not found:
        return list(matches), tuple(rules)
    explained = _explained(matches, by_id)
    per_code: dict[str, list[tuple[Match, tuple[Entry, ...], Severity]]] = {}
    for match in found:
        code = dict(match.evidence.captures).get("code", "")
        where = (match.input_index, match.evidence.line)
        if explained.covers_as_printed(code, where):
            continue  # settled without reading the catalogue
        meanings = _in_log(code, match.evidence.text)
        if not meanings or explained.covers(code, meanings, where):
            continue
        shown = code.upper() if code[:1].isalpha() else code.lower()
        per_code.setdefault(shown, []).append((match, meanings, severity_of(match.evidence.text)))
    kept = [m for m in matches if m.rule_id not in FINDER_IDS]
    added: list[Rule] = []
    for code, items in per_code.items():
        worst = max(severity.weight for _m, _e, severity in items)
        items = [item for item in items if item[2].weight == worst]
        meanings = tuple(dict.fromkeys(entry for _m, found_here, _s in items for entry in found_here))
        rule = code_rule(code, meanings, Severity({3: "error", 2: "warning", 1: "info"}[worst]))
        added.append(rule)
        kept.extend(match._replace(rule_id=rule.id) for match, _e, _s in items)
    return kept, (*rules, *added)


def code_rule(code: str, meanings: Sequence[Entry], severity: Severity = Severity.ERROR) -> Rule:
    """The finding's rule for one code: its meaning(s), category, what to check next and source."""
    first = meanings[0]
    category = _category(meanings)
    advice = first.advice if category == first.category else _catch_all_advice()
    names = " / ".join(f"{entry.title or entry.group} ({entry.system})" for entry in meanings)
    said = "; ".join(_said(entry) for entry in meanings)
    sources = tuple(dict.fromkeys(entry.source for entry in meanings if entry.source))
    return Rule(
        id=f"catalogue.{first.code if len(meanings) == 1 else code}",
        category=category,
        severity=severity,
        confidence=Confidence.LOW,
        kind=Kind.SYMPTOM,
        title=Text(en=f"CANN error code {code}: {names}", zh=f"CANN 错误码 {code}：{names}"),
        cause=Text(
            en=f"The log carries CANN code {code}, which no more specific rule explains. It means: {said}.",
            zh=f"日志中有 CANN 错误码 {code}，没有更具体的规则能解释它。含义（CANN 原文）：{said}。",
        ),
        fix=advice,
        env=(),
        patterns=(),
        examples=Examples((), ()),
        codes=(code, *(entry.code for entry in meanings if entry.code.upper() != code)),
        sources=sources,
        path="ascend_doctor/rulebase/catalogue.json",
    )


def _said(entry: Entry) -> str:
    """`meaning (system: title)`, and the aclError the runtime turns it into, if any."""
    text = f"{entry.meaning.rstrip('. ')} ({entry.system}: {entry.title or entry.group})"
    return (
        f"{text}, reported to the application as {entry.maps_to.split(' -> ')[-1]}" if entry.maps_to else text
    )


def _catch_all_advice() -> Text:
    catalogue = _load()
    return next(entry.advice for entry in catalogue.entries if entry.category == "needs_more_evidence")
