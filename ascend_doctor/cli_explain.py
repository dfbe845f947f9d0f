"""`ascend-doctor explain CODE|RULE_ID|ENV_VAR`: offline explanation from the rule base."""

from __future__ import annotations

import difflib

import click
from rich.console import Console
from rich.text import Text

from ascend_doctor.cli import cli
from ascend_doctor.cli_rules import print_rule
from ascend_doctor.config import LANGUAGES, default_language
from ascend_doctor.errors import ConfigError
from ascend_doctor.knowledge import EnvVar, env_vars
from ascend_doctor.model import Rule
from ascend_doctor.rulebase import RuleBase, load_rulebase


def _normal(code: str) -> str:
    return code.strip().upper()


def rules_for(rulebase: RuleBase, code: str) -> list[Rule]:
    """Rules that are, or explain, `code`: by id or alias, then by their `codes`."""
    rule = rulebase.find(code.strip())
    if rule is not None:
        return [rule]
    wanted = _normal(code)
    return [r for r in rulebase.rules if wanted in (_normal(c) for c in r.codes)]


def _print_env(var: EnvVar, lang: str, referenced_by: list[Rule]) -> None:
    console = Console(markup=False, highlight=False)
    console.print(Text(f"{var.name} ({var.layer})", style="bold"))
    for label, value in (
        ("meaning", var.meaning.get(lang)),
        ("default", var.default),
        ("values", var.values),
        ("change it", var.when.get(lang)),
    ):
        if value:
            console.print(Text(f"  {label + ':':<12}{value}"))
    for source in var.sources:
        console.print(Text(f"  {'source:':<12}{source}"))
    for rule in referenced_by:
        remedy = next(e for e in rule.env if e.name == var.name)
        console.print(Text(f"  {'remedy in:':<12}{rule.id}: export {var.name}={remedy.value}"))


def _suggestions(rulebase: RuleBase, code: str) -> list[str]:
    known = {c for rule in rulebase.rules for c in rule.codes} | {r.id for r in rulebase.rules}
    known |= set(env_vars())
    by_upper = {k.upper(): k for k in known}
    close = difflib.get_close_matches(_normal(code), list(by_upper), n=5, cutoff=0.6)
    return [by_upper[c] for c in close]


@cli.command("explain")
@click.argument("code")
@click.option("--rules", "rules_dirs", multiple=True, metavar="DIR", help="Also load the rules in DIR.")
@click.option("--lang", type=click.Choice(LANGUAGES), default=None, help="Language (default: from LANG).")
def explain_command(code: str, rules_dirs: tuple[str, ...], lang: str | None) -> None:
    """Explain an error code, a rule id or an environment variable, offline.

    \b
    Examples:
      ascend-doctor explain EL0004
      ascend-doctor explain 507015
      ascend-doctor explain ERR02011
      ascend-doctor explain HCCL_CONNECT_TIMEOUT
      ascend-doctor explain hccl.collective-bool-dtype
    """
    language = lang or default_language()
    rulebase = load_rulebase(rules_dirs)
    var = env_vars().get(code.strip().upper())
    rules = rules_for(rulebase, code)
    if var is not None:
        _print_env(var, language, [r for r in rulebase.rules if any(e.name == var.name for e in r.env)])
        return
    if not rules:
        nearest = _suggestions(rulebase, code)
        hint = f"; nearest known: {', '.join(nearest)}" if nearest else ""
        raise ConfigError(f"unknown code, rule id or environment variable {code!r}{hint}")
    for index, rule in enumerate(rules):
        if index:
            click.echo()
        print_rule(rule, language)
