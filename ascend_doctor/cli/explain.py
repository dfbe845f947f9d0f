"""`ascend-doctor explain CODE|RULE_ID|ENV_VAR`: offline explanation from the rule base and the knowledge."""

from __future__ import annotations

import difflib
import json
import sys
from dataclasses import dataclass
from typing import Any, Callable

import click
import regex
from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from ascend_doctor.cli.options import format_option, lang_option, rules_option
from ascend_doctor.cli.rules import TEXT_OR_JSON, print_rule, public_sources, rule_dict
from ascend_doctor.config import default_language
from ascend_doctor.errors import ConfigError
from ascend_doctor.model import Rule, plain
from ascend_doctor.rulebase import catalogue
from ascend_doctor.rulebase.catalogue import Entry
from ascend_doctor.rulebase.knowledge import EnvVar, env_var_names, find_env_var
from ascend_doctor.rulebase.load import RuleBase, load_rulebase

# What an error code looks like (EL0004, EZ9999, 507015, ERR02011): only such queries are looked
# up in the rules' examples and patterns, so a plain word never matches half the rule base.
CODE_SHAPE = regex.compile(r"[A-Z]{0,4}\d{4,}")

LABELS = {
    "en": {
        "meaning": "meaning:",
        "default": "default:",
        "values": "values:",
        "when": "change it:",
        "source": "source:",
        "aliases": "also read:",
        "remedy": "remedy in:",
        "mentioned": "see also:",
        "category": "category:",
        "message": "printed as:",
        "older": "older text:",
        "named": "also named:",
        "reported": "reported as:",
        "next": "check next:",
        "status": "status:",
    },
    "zh": {
        "meaning": "含义：",
        "default": "默认值：",
        "values": "取值：",
        "when": "何时修改：",
        "source": "来源：",
        "aliases": "别名：",
        "remedy": "推荐于：",
        "mentioned": "另见：",
        "category": "类别：",
        "message": "日志原文：",
        "older": "旧版原文：",
        "named": "别名：",
        "reported": "上报为：",
        "next": "下一步检查：",
        "status": "状态：",
    },
}


@dataclass(frozen=True)
class Explanation:
    """What `explain` found for one query: an environment variable and/or the rules about it."""

    query: str
    env_var: EnvVar | None
    rules: list[Rule]
    codes: tuple[Entry, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "env_var": plain(self.env_var) if self.env_var else None,
            "rules": [rule_dict(rule) for rule in self.rules],
            "codes": [_code_dict(entry) for entry in self.codes],
        }


def _code_dict(entry: Entry) -> dict[str, Any]:
    data = plain(entry)
    data["class"] = data.pop("group")
    data["meaning"] = entry.meaning
    return data


def _normal(code: str) -> str:
    return code.strip().upper()


def _mentioned_in(code: str, texts: Callable[[Rule], tuple[str, ...]], rules: list[Rule]) -> list[Rule]:
    """The rules where `code` appears as a whole token in one of `texts(rule)`, ignoring case."""
    token = regex.compile(rf"(?<![A-Z0-9]){regex.escape(code)}(?![A-Z0-9])", regex.IGNORECASE)
    return [rule for rule in rules if any(token.search(text.replace("\\b", " ")) for text in texts(rule))]


def _signature(rule: Rule) -> tuple[str, ...]:
    """What the rule itself says it matches: its id, its titles and its patterns."""
    return (rule.id, rule.title.en, rule.title.zh, *rule.patterns)


def _ranked(wanted: str, candidates: list[Rule]) -> list[Rule]:
    """Best first: rules of the area `wanted` names (`hccl` → `hccl.*`), then rules whose own
    signature carries `wanted` (the rule *for* a code before rules that merely list it), then load order."""
    own = {rule.id for rule in _mentioned_in(wanted, _signature, candidates)}

    def key(rule: Rule) -> tuple[bool, bool]:
        return (_area(rule) != wanted, rule.id not in own)

    return sorted(candidates, key=key)  # stable: load order breaks ties


def _area(rule: Rule) -> str:
    return _normal(rule.id.split(".", 1)[0])


def rules_for(rulebase: RuleBase, code: str) -> list[Rule]:
    """Rules that are `code` (id or alias); else those of the area it names or listing it in `codes`,
    best first; else, for a code, those showing it in examples, else in patterns."""
    rule = rulebase.find(code.strip().lower())
    if rule is not None:
        return [rule]
    wanted = _normal(code)
    listed = [r for r in rulebase.rules if _area(r) == wanted or wanted in {_normal(c) for c in r.codes}]
    if listed or not CODE_SHAPE.fullmatch(wanted):
        return _ranked(wanted, listed)
    # The catalogue's finder rules list every code in their patterns; the catalogue itself explains them.
    own = [rule for rule in rulebase.rules if rule.id not in catalogue.FINDER_IDS]
    in_examples = _mentioned_in(wanted, lambda r: r.examples.match, own)
    return in_examples or _mentioned_in(wanted, lambda r: r.patterns, own)


def _names(var: EnvVar) -> set[str]:
    return {name.upper() for name in (var.name, *var.aliases)}


def _rules_about(rulebase: RuleBase, var: EnvVar) -> list[Rule]:
    """Rules that recommend `var` as a remedy or list it among their codes."""
    names = _names(var)
    return [
        rule
        for rule in rulebase.rules
        if names & {remedy.name.upper() for remedy in rule.env} or names & {_normal(c) for c in rule.codes}
    ]


# How alike a known name must be to be suggested: at 0.5, ZZ1234 got 107023 (three digits shared).
SUGGEST_CUTOFF = 0.6
# An error code: letters (EL, ERR, 0X), then digits.
_CODE_FORM = regex.compile(r"(?:0X|[A-Z]*)[0-9A-F]*[0-9][0-9A-F]*")


def _typo_of(query: str, name: str) -> bool:
    """Whether a known code could be what a code was meant to be: two neighbours swapped (EL0040 for
    EL0004), or one character more or fewer (EL00004). One character changed is not: codes are
    numbered in sequence, so 0x7020013 beside 0x7020014, or EL0009 beside EL0094, is another error."""
    if len(query) == len(name):
        differ = [i for i, (a, b) in enumerate(zip(query, name)) if a != b]
        if len(differ) != 2 or differ[1] != differ[0] + 1:
            return False
        first, second = differ
        return query[first] == name[second] and query[second] == name[first]
    shorter, longer = sorted((query, name), key=len)
    return len(longer) - len(shorter) == 1 and any(
        longer[:i] + longer[i + 1 :] == shorter for i in range(len(longer))
    )


def _suggestions(rulebase: RuleBase, code: str) -> list[str]:
    known = {c for rule in rulebase.rules for c in rule.codes}
    known |= {name for rule in rulebase.rules for name in (rule.id, *rule.aliases)}
    known |= set(env_var_names())
    query = _normal(code)
    by_upper = {k.upper(): k for k in known}
    if _CODE_FORM.fullmatch(query):
        return sorted(by_upper[name] for name in by_upper if _typo_of(query, name))[:3]
    close = difflib.get_close_matches(query, list(by_upper), n=len(by_upper), cutoff=SUGGEST_CUTOFF)
    # Among names alike, one with the very same characters (two swapped) first.
    close.sort(
        key=lambda name: (sorted(name) != sorted(query), -difflib.SequenceMatcher(None, query, name).ratio())
    )
    return [by_upper[name] for name in close[:3]]


def _rules_naming(rulebase: RuleBase, codes: tuple[Entry, ...]) -> list[Rule]:
    """Rules that list one of the catalogued codes' names among their `codes` (0x26 finds the rule
    that lists `retCode=0x26`, or the aclError name the code becomes)."""
    names = {_normal(n) for e in codes for n in (e.code, f"retCode={e.code}", e.title, *e.aliases) if n}
    return [rule for rule in rulebase.rules if names & {_normal(c) for c in rule.codes}]


def explain(rulebase: RuleBase, query: str) -> Explanation:
    """Look `query` up as an environment variable, a rule id or alias, an error code or a rule area;
    an error code also in the CANN code catalogue, after the rules that explain it."""
    var = find_env_var(query)
    rules = _rules_about(rulebase, var) if var else rules_for(rulebase, query)
    codes = () if var or rulebase.find(query.strip().lower()) else catalogue.lookup(query)
    if codes and not rules:
        rules = _rules_naming(rulebase, codes)
    if var is None and not rules and not codes:
        nearest = _suggestions(rulebase, query)
        hint = f"nearest known: {', '.join(nearest)}" if nearest else "see: ascend-doctor rules list"
        raise ConfigError(f"unknown error code, rule id or environment variable {query.strip()!r}; {hint}")
    return Explanation(query=query.strip(), env_var=var, rules=rules, codes=codes)


def _console() -> Console:
    return Console(markup=False, highlight=False, soft_wrap=not sys.stdout.isatty())


def _print_env(var: EnvVar, lang: str, rules: list[Rule]) -> None:
    label = LABELS[lang]
    console = _console()
    console.print(Text(f"{var.name} ({var.layer})", style="bold"))

    def line(key: str, value: str) -> None:
        if value:
            console.print(Text(f"  {label[key]}{' ' * (12 - cell_len(label[key]))}{value}"))

    line("aliases", ", ".join(var.aliases))
    line("meaning", var.meaning.get(lang))
    line("default", var.default)
    line("values", var.values)
    line("when", var.when.get(lang))
    for source in public_sources(var.sources):
        line("source", source)
    for rule in rules:
        remedy = next((e for e in rule.env if e.name.upper() in _names(var)), None)
        if remedy is None:
            line("mentioned", f"{rule.id}: {rule.title.get(lang)}")
        else:
            line("remedy", f"{rule.id}: export {remedy.name}={remedy.value}   # {remedy.why.get(lang)}")


def _print_code(entry: Entry, lang: str) -> None:
    """One catalogued code: what CANN prints for it (as printed), our category and advice, its source."""
    label = LABELS[lang]
    console = _console()
    console.print(
        Text(f"{entry.code} ({entry.system}, {entry.group}): {entry.title or entry.meaning}", style="bold")
    )

    def line(key: str, value: str) -> None:
        if value:
            console.print(Text(f"  {label[key]}{' ' * max(1, 13 - cell_len(label[key]))}{value}"))

    line("category", entry.category)
    line("message", entry.meaning)
    for older in entry.messages[1:]:
        line("older", older)
    line("named", ", ".join(entry.aliases))
    line("reported", entry.maps_to)
    line("next", entry.advice.get(lang))
    line("source", entry.source)
    line("status", entry.status)


def _print_text(found: Explanation, lang: str, verbose: bool) -> None:
    if found.env_var is not None:
        _print_env(found.env_var, lang, found.rules)
        return
    blocks: list[Callable[[], None]] = [
        lambda rule=rule: print_rule(rule, lang, verbose) for rule in found.rules
    ]
    blocks += [lambda entry=entry: _print_code(entry, lang) for entry in found.codes]
    for index, block in enumerate(blocks):
        if index:
            click.echo()
        block()


# A DCMI code such as -8005 would otherwise be read as an unknown option.
@click.command("explain", context_settings={"ignore_unknown_options": True})
@click.argument("code")
@rules_option()
@format_option(TEXT_OR_JSON, what="output")
@lang_option()
@click.option("-v", "--verbose", is_flag=True, help="Also show the rules' patterns (regexes).")
def explain_command(
    code: str, rules_dirs: tuple[str, ...], fmt: str, lang: str | None, verbose: bool
) -> None:
    """Explain an error code, a rule id or an environment variable, offline.

    Codes are matched ignoring case; the rules whose own title or patterns carry the code come
    first, and a code no rule lists is looked up in the rules' examples and patterns. Then the
    CANN code catalogue (1,849 codes of GE, TBE, runtime, driver, HCCL, ACL, ...) says what the
    code means, its category, what to check next and the upstream source; a number that several
    systems use shows each meaning. `retCode=0x26`, `0X26` and 38 all find TS code 0x26. An area
    (hccl, memory, ...) shows its rules. An unknown query exits 2 and names the nearest known codes.

    \b
    Examples:
      ascend-doctor explain EL0004
      ascend-doctor explain 507015
      ascend-doctor explain retCode=0x26
      ascend-doctor explain E40021 --lang zh
      ascend-doctor explain ERR02011
      ascend-doctor explain HCCL_CONNECT_TIMEOUT --lang zh
      ascend-doctor explain hccl.collective-bool-dtype --format json
    """
    found = explain(load_rulebase(rules_dirs), code)
    if fmt == "json":
        click.echo(json.dumps(found.as_json(), ensure_ascii=False, indent=2))
        return
    _print_text(found, lang or default_language(), verbose)
