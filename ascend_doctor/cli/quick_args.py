"""Read a plain `diagnose` command line without click.

Importing click costs ~40 ms, more than scanning a small log, and most command lines are paths
with a few common options: `--format json -o report.json --exit-zero`. This reader takes those:
the long options as `--name VALUE` or `--name=VALUE`, `-f`/`-o`/`-j` followed by their value, and
the flags, each given once, with a value click would accept. On anything else (no argument, help,
`--version`, another command, `--`, an attached short value, an option given twice, a value click
would refuse, an option or completion request in the environment) it answers None
and click reads the command line, so click's help and errors are the only ones.
tests/test_entry.py checks that every command line read here is the request click builds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ascend_doctor.cli.request import COMMANDS, ENGINES, FAIL_ON, MAX_JOBS, DiagnoseRequest
from ascend_doctor.config import DIAGNOSE_ENVIRONMENT, LANGUAGES
from ascend_doctor.render import RENDERERS

COMPLETION_ENVIRONMENT = "_ASCEND_DOCTOR_COMPLETE"  # set by shells asking click for completions


def _choice(choices: Sequence[str]) -> Callable[[str], str | None]:
    return lambda value: value if value in choices else None


def _jobs(value: str) -> int | None:
    if not (value.isascii() and value.isdigit() and len(value) <= 4):  # int() refuses 4,300 digits
        return None
    return int(value) if 1 <= int(value) <= MAX_JOBS else None


_FORMAT = ("fmt", _choice(tuple(RENDERERS)))
_OUTPUT = ("output", str)
_JOBS = ("jobs", _jobs)

# Option spelling -> (DiagnoseRequest field, reader of its value: None for a value click refuses).
VALUED: dict[str, tuple[str, Callable[[str], object]]] = {
    "--format": _FORMAT,
    "-f": _FORMAT,
    "--output": _OUTPUT,
    "-o": _OUTPUT,
    "--rules": ("rules_dirs", str),
    "--lang": ("lang", _choice(LANGUAGES)),
    "--fail-on": ("fail_on", _choice(FAIL_ON)),
    "--stdin-name": ("stdin_name", str),
    "--engine": ("engine", _choice(ENGINES)),
    "--jobs": _JOBS,
    "-j": _JOBS,
    "--node": ("node", str),
}
FLAGS: dict[str, tuple[str, bool]] = {
    "--exit-zero": ("exit_zero", True),
    "--color": ("color", True),
    "--no-color": ("color", False),
    "--no-cache": ("no_cache", True),
    "--debug": ("debug", True),
    "--tee": ("tee", True),
}


def quick_request(args: Sequence[str], environ: Mapping[str, str]) -> DiagnoseRequest | None:
    """The diagnosis `args` ask for, or None when click must read them."""
    if args[:1] == ["diagnose"]:
        args = args[1:]
    elif not args or args[0] in COMMANDS:
        return None
    if COMPLETION_ENVIRONMENT in environ or any(name in environ for name in DIAGNOSE_ENVIRONMENT.values()):
        return None
    fields: dict[str, object] = {}
    paths: list[str] = []
    rules_dirs: list[str] = []
    rest = iter(args)
    for arg in rest:
        if arg == "-" or not arg.startswith("-"):
            paths.append(arg)
            continue
        name, equals, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name in FLAGS and not equals:
            field, parsed = FLAGS[name]
        elif name in VALUED:
            field, read = VALUED[name]
            given = value if equals else next(rest, None)
            parsed = read(given) if given is not None else None
            if parsed is None:
                return None
        else:
            return None
        if field == "rules_dirs":
            rules_dirs.append(str(parsed))
        elif field in fields:
            return None
        else:
            fields[field] = parsed
    return DiagnoseRequest(paths=tuple(paths), rules_dirs=tuple(rules_dirs), **fields)
