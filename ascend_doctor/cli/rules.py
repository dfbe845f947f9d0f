"""`ascend-doctor rules list|show|test`: browse and self-test the rule base."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click
from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from ascend_doctor.cli.options import engine_option, format_option, lang_option, rules_option
from ascend_doctor.config import default_language
from ascend_doctor.errors import ConfigError, ExitCode
from ascend_doctor.match.prefilter import require_engine
from ascend_doctor.match.selfcheck import check_rules
from ascend_doctor.model import Rule, plain
from ascend_doctor.rulebase.knowledge import find_env_var
from ascend_doctor.rulebase.load import bundled_rules_dir, load_rulebase, rule_files
from ascend_doctor.rulebase.prose import prose_problems

TEXT_OR_JSON = ("text", "json")  # what `rules list` and `explain` write


def rule_dict(rule: Rule) -> dict[str, Any]:
    """A rule exactly as loaded, as plain JSON-able data."""
    data = plain(rule)
    data["source"] = {"path": data.pop("path"), "line": data.pop("line")}
    return data


@click.group("rules")
def rules_group() -> None:
    """Browse and test the rule base (bundled rules plus any --rules DIR).

    \b
    Examples:
      ascend-doctor rules list --category hccl_timeout
      ascend-doctor rules show hccl.ei0002-notify-timeout
      ascend-doctor rules test ./my-rules
    """


def _known_category(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A category of the taxonomy, refused as click refuses a bad choice. The taxonomy is read only
    when the option is given: this module is imported on every command line click parses."""
    if value is None:
        return None
    from ascend_doctor.rulebase.taxonomy import categories

    return str(click.Choice(list(categories())).convert(value, param, ctx))


@rules_group.command("list")
@rules_option()
@format_option(TEXT_OR_JSON, what="output")
@click.option(
    "--category",
    default=None,
    metavar="CATEGORY",
    callback=_known_category,
    help="Only rules of this category.",
)
def rules_list(rules_dirs: tuple[str, ...], fmt: str, category: str | None) -> None:
    """List every rule: id, category, severity and title (JSON: every field).

    \b
    Example:
      ascend-doctor rules list --format json | jq '.[].id'
    """
    rules = [r for r in load_rulebase(rules_dirs).rules if category in (None, r.category)]
    if fmt == "json":
        click.echo(json.dumps([rule_dict(rule) for rule in rules], ensure_ascii=False, indent=2))
        return
    lang = default_language()
    for rule in rules:
        click.echo(f"{rule.id:<48} {rule.category:<30} {rule.severity.value:<8} {rule.title.get(lang)}")
    click.echo(f"{len(rules)} rules", err=True)


@rules_group.command("show")
@click.argument("rule_id")
@rules_option()
@lang_option()
@click.option("-v", "--verbose", is_flag=True, help="Also show the rule's patterns.")
def rules_show(rule_id: str, rules_dirs: tuple[str, ...], lang: str | None, verbose: bool) -> None:
    """Show one rule, readable: what it means, the fix, and where to read more.

    \b
    Example:
      ascend-doctor rules show memory.el0004-alloc-failed
      ascend-doctor rules show memory.el0004-alloc-failed --verbose   # with its patterns
    """
    rule = load_rulebase(rules_dirs).find(rule_id)
    if rule is None:
        raise ConfigError(f"no rule with id {rule_id!r} (see: ascend-doctor rules list)")
    print_rule(rule, lang or default_language(), verbose=verbose)


FIELD_NAMES = {
    "en": {
        "category": "category",
        "severity": "severity",
        "confidence": "confidence",
        "kind": "kind",
        "codes": "codes",
        "env vars": "env vars",
        "cause": "cause",
        "fix": "fix",
        "env": "env",
        "pattern": "pattern",
        "source": "read more",
        "defined in": "defined in",
    },
    "zh": {
        "category": "类别",
        "severity": "严重程度",
        "confidence": "置信度",
        "kind": "类型",
        "codes": "错误码",
        "env vars": "环境变量",
        "cause": "原因",
        "fix": "修复",
        "env": "设置",
        "pattern": "模式",
        "source": "参考",
        "defined in": "定义于",
    },
}


# Sources that name the project's own research notes, which a user does not have.
_INTERNAL_SOURCES = ("knowledge", "seed ", "cann-error-codes")


def public_sources(sources: tuple[str, ...]) -> list[str]:
    """The sources a user can open (links, published documents), each once: not the project's
    own research notes (`knowledge §2 ...`, `seed 000 ...`)."""
    public = (source.strip() for source in sources)
    return list(
        dict.fromkeys(source for source in public if not source.lower().startswith(_INTERNAL_SOURCES))
    )


def print_rule(rule: Rule, lang: str, verbose: bool = False) -> None:
    """The readable form of one rule, shared by `rules show` and `explain`; patterns only when
    `verbose`."""
    console = Console(markup=False, highlight=False, soft_wrap=not sys.stdout.isatty())
    console.print(Text(f"{rule.id}: {rule.title.get(lang)}", style="bold"))
    names = FIELD_NAMES.get(lang, FIELD_NAMES["en"])

    def field(name: str, value: str, style: str = "") -> None:
        label = names[name] + ("：" if lang == "zh" else ":")
        console.print(Text(f"  {label}{' ' * max(1, 12 - cell_len(label))}{value}", style=style))

    codes, env_vars = _codes_and_env_vars(rule)
    fields = [
        ("category", rule.category),
        ("severity", rule.severity.value),
        ("confidence", rule.confidence.value),
        ("kind", rule.kind.value),
        ("codes", ", ".join(codes)),
        ("env vars", ", ".join(env_vars)),
        ("cause", rule.cause.get(lang)),
        ("fix", rule.fix.get(lang)),
    ]
    for name, value in fields:
        if value:
            field(name, value)
    for remedy in rule.env:
        field("env", f"export {remedy.name}={remedy.value}   # {remedy.why.get(lang)}")
    for pattern in rule.patterns if verbose else ():
        field("pattern", pattern)
    for source in public_sources(rule.sources):
        field("source", source)
    field("defined in", f"{rule.path}:{rule.line}", style="dim")


def _codes_and_env_vars(rule: Rule) -> tuple[list[str], list[str]]:
    """The rule's `codes` split into error codes and the environment variables it is about; a
    variable it recommends is left out, as its `env:` line already names it."""
    remedies = {remedy.name.upper() for remedy in rule.env}
    codes: list[str] = []
    env_vars: list[str] = []
    for code in rule.codes:
        if code.upper() in remedies:
            continue
        (codes if find_env_var(code) is None else env_vars).append(code)
    return codes, env_vars


@rules_group.command("test")
@click.argument("directory", required=False, metavar="[DIR]")
@engine_option()
def rules_test(directory: str | None, engine: str) -> None:
    """Run every rule's match / no_match examples and check its prose; exit 1 on any miss.

    A space between two Chinese characters in a title, cause, fix or env reason fails too (a
    line break inside a YAML `>-` block becomes one).

    Without DIR the bundled rules are tested; with DIR only the rules in DIR.

    \b
    Example:
      ascend-doctor rules test ./my-rules
    """
    # DIR is loaded beside the bundled rules, as `--rules DIR` is, so an id it reuses is refused the
    # same way; DIR being the bundled rules themselves, or one of their files, is not a reuse.
    require_engine(engine)
    shipped = os.path.realpath(bundled_rules_dir())
    inside = directory is not None and os.path.commonpath([os.path.realpath(directory), shipped]) == shipped
    rulebase = load_rulebase([directory] if directory else (), bundled=not inside, use_cache=False)
    own = set(rule_files(directory)) if directory else set(rulebase.files)
    tested = tuple(rule for rule in rulebase.rules if rule.path in own)
    result = check_rules(tested, engine, others=rulebase.rules)
    for problem in result.failures:
        click.echo(f"FAIL {problem.rule_id}: {problem.kind}: {problem.detail}")
    prose = [(rule, problem) for rule in tested for problem in prose_problems(rule)]
    for rule, problem in prose:
        click.echo(f"FAIL {rule.id}: prose: {rule.path}:{rule.line}: {problem}")
    for problem in result.warnings:
        click.echo(f"warning {problem.rule_id}: {problem.kind}: {problem.detail}", err=True)
    ok = result.ok and not prose
    prose_note = f", {len(prose)} prose problem(s)" if prose else ""
    click.echo(
        f"{result.examples - len(result.failures)} passed, {len(result.failures)} failed "
        f"({result.rules} rules, {result.examples} examples){prose_note}: {'passed' if ok else 'failed'}"
    )
    sys.exit(ExitCode.CLEAN if ok else ExitCode.FOUND)
