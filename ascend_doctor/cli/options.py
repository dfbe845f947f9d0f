"""The options several commands share, declared once so that their spelling, choices, defaults and
help read the same in every command. A factory's parameters are only where commands really differ."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Callable

import click

from ascend_doctor.cli.request import DEFAULTS, ENGINES, FAIL_ON
from ascend_doctor.config import LANGUAGES

Option = Callable[[Callable[..., Any]], Callable[..., Any]]  # a decorator adding the option


def format_option(choices: Sequence[str], envvar: str | None = None, what: str = "report") -> Option:
    """-f/--format: `choices` are the formats this command writes; `what` it writes in them."""
    return click.option(
        "-f",
        "--format",
        "fmt",
        type=click.Choice(choices),
        default=DEFAULTS.fmt,
        envvar=envvar,
        show_default=True,
        help=f"{what.capitalize()} format.",
    )


def output_option(screen: str = "stdout") -> Option:
    """-o/--output: `screen` is where '-' (the default) writes the report."""
    return click.option(
        "-o",
        "--output",
        default=DEFAULTS.output,
        metavar="FILE",
        help=f"Write the report to FILE ('-' = {screen}, the default).",
    )


def rules_option() -> Option:
    return click.option(
        "--rules",
        "rules_dirs",
        multiple=True,
        metavar="DIR",
        help="Also load the rule files (*.yaml) in DIR; repeatable. See docs/rule-format.md.",
    )


def lang_option() -> Option:
    return click.option(
        "--lang",
        type=click.Choice(LANGUAGES),
        default=None,
        help="Output language (default: from LC_ALL, LC_MESSAGES or LANG).",
    )


def fail_on_option(effect: str = "makes the exit code 1", envvar: str | None = None) -> Option:
    """--fail-on: `effect` is what a finding of that severity or above does in this command."""
    return click.option(
        "--fail-on",
        type=click.Choice(FAIL_ON),
        default=DEFAULTS.fail_on,
        show_default=True,
        envvar=envvar,
        help=f"Lowest severity that {effect}.",
    )


def exit_zero_option(still_two: str, exits: str = "Report findings but exit 0") -> Option:
    """--exit-zero: `still_two` names what exits 2 all the same, so CI users know what still fails."""
    return click.option("--exit-zero", is_flag=True, help=f"{exits} ({still_two} is still 2).")


def color_option() -> Option:
    return click.option(
        "--color/--no-color",
        default=None,
        help="Force colour on or off (default: on for a terminal; NO_COLOR is honoured).",
    )


def engine_option() -> Option:
    return click.option(
        "--engine",
        type=click.Choice(ENGINES),
        default=DEFAULTS.engine,
        show_default=True,
        help="Prefilter engine; 'auto' uses hyperscan when installed. Findings are identical.",
    )


def no_cache_option() -> Option:
    return click.option("--no-cache", is_flag=True, help="Do not use the compiled rule cache.")


def debug_option() -> Option:
    return click.option("--debug", is_flag=True, help="Show tracebacks for internal errors.")
