"""Regexes rebuilt from the code `re` compiled them to, so that the code can be cached.

`re` cannot keep a compiled pattern: pickled, it is its source, compiled again on loading. The
modules a diagnosis imports compile ~160 regexes, ~13 ms of a 75 ms start-up, and the pure-Python
prefilter's tries ~180 ms, most of what a log of a few megabytes takes. Rebuilt from their code,
they take ~2 ms each way. This uses CPython's private `_sre.compile`, called alike from 3.9 to
3.13, which checks that the code is well formed (not that it is the source's); the code is cached
under the exact Python version (see cache.py) and `_sre`'s own version, and whatever does not fit
is compiled by `re` as usual.
"""

from __future__ import annotations

import array
import atexit
import re
import sys
from typing import Any, AnyStr, Optional

from ascend_doctor.cache import read_cache, write_cache

try:
    import _sre
    from re import _compiler, _parser  # type: ignore[attr-defined]
except ImportError:  # Python 3.9 and 3.10 name the modules so
    import _sre
    import sre_compile as _compiler
    import sre_parse as _parser

# Another interpreter may have an `_sre` that does not check the code it is given.
REBUILDS = sys.implementation.name == "cpython"
# What the code depends on besides the Python version: the layout below, `_sre`'s own version,
# the width and byte order of its words.
CODE_FORMAT = f"1|{getattr(_sre, 'MAGIC', 0)}|{getattr(_sre, 'CODESIZE', 0)}|{sys.byteorder}"
# The pattern's flags, its code as 4-byte words, its number of groups, and its named groups.
Code = tuple[int, bytes, int, dict[str, int]]
MaybeCode = Optional[Code]
# Codes kept in the cache at most: the package's regexes and the rule patterns logs met (the
# bundled rules have ~1,100). Past it, those this run used come first.
TABLE_SIZE = 4096
MAX_GROUPS = 10_000  # a sane bound for a cached group count; the package's patterns have under 20

Key = tuple[type, Any, int]  # str and bytes sources of the same text hash alike: the type tells them apart
_table: dict[Key, Code] | None = None
_used: set[Key] = set()
_added: dict[Key, Code] = {}
_built: dict[Key, re.Pattern[Any]] = {}  # every pattern built, unlike `re`'s cache of 512


def regex(source: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """`re.compile(source, flags)`, rebuilt from the code an earlier run cached if it can be."""
    key = (type(source), source, int(flags))
    pattern = _built.get(key)
    if pattern is not None:
        return pattern
    code = _cached().get(key)
    pattern = _from_code(source, code) if code is not None else None
    if pattern is not None:
        _used.add(key)
    else:  # not cached, or its code did not fit: cached anew
        pattern, code = compile_with_code(source, flags)
        if code is not None:
            _added[key] = code
    _built[key] = pattern
    return pattern


def compile_with_code(source: AnyStr, flags: int = 0) -> tuple[re.Pattern[AnyStr], MaybeCode]:
    """`source` compiled, and the code that rebuilds it (None: it cannot be rebuilt)."""
    if REBUILDS:
        try:
            parsed = _parser.parse(source, int(flags))
            words = array.array("I", _compiler._code(parsed, int(flags))).tobytes()
            code: Code = (int(flags) | parsed.state.flags, words, parsed.state.groups, parsed.state.groupdict)
            pattern = _from_code(source, code)
            if pattern is not None:
                return pattern, code
        except Exception:  # `re` raises its own error just below
            pass
    return re.compile(source, flags), None


def rebuild(source: AnyStr, code: MaybeCode, flags: int = 0) -> re.Pattern[AnyStr]:
    """The pattern `compile_with_code` gave for `source`, from its code if it still fits."""
    pattern = _from_code(source, code) if code is not None else None
    return pattern if pattern is not None else re.compile(source, flags)


def _from_code(source: AnyStr, code: Any) -> re.Pattern[AnyStr] | None:
    """The pattern `code` describes, or None: not CPython, or code from another build or a damaged
    cache (a wrong shape, groups out of range, or words `_sre` refuses)."""
    if not REBUILDS:
        return None
    try:
        flags, words, groups, names = code
        if not (type(flags) is int and type(groups) is int and 0 < groups <= MAX_GROUPS):
            return None
        if not all(
            type(name) is str and type(index) is int and 0 < index < groups for name, index in names.items()
        ):
            return None
        ints = array.array("I")
        ints.frombytes(words)
        numbered: list[str | None] = [None] * groups
        for name, index in names.items():
            numbered[index] = name
        return _sre.compile(source, flags, ints.tolist(), groups - 1, dict(names), tuple(numbered))
    except Exception:
        return None


def _cached() -> dict[Key, Code]:
    """The codes an earlier run cached, read on the first regex; the new ones are written at exit."""
    global _table
    if _table is None:
        stored = read_cache("regexes", CODE_FORMAT) if REBUILDS else None
        _table = stored if isinstance(stored, dict) else {}
        atexit.register(save)
    return _table


def save() -> None:
    """Cache the codes of the regexes compiled since the table was read, if any."""
    if not _added or _table is None:
        return
    first = {key: code for key, code in _table.items() if key in _used}
    kept = {**first, **_added}
    for key, code in _table.items():
        if len(kept) >= TABLE_SIZE:
            break
        kept.setdefault(key, code)
    write_cache("regexes", CODE_FORMAT, kept)
    _table.update(_added)
    _added.clear()


def forget() -> None:
    """Write no codes at exit (`--no-cache`: a run leaves the cache as it found it)."""
    _added.clear()
    atexit.unregister(save)
