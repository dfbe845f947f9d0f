"""Regexes rebuilt from the code `re` compiled them to, so that the code can be cached.

`re` cannot keep a compiled pattern: pickled, it is its source, compiled again on loading. The
modules a diagnosis imports compile ~160 regexes, ~13 ms of a 75 ms start-up, and the pure-Python
prefilter's tries ~180 ms, most of what a log of a few megabytes takes. Rebuilt from their code,
they take ~2 ms each way. This uses CPython's private `_sre.compile`, called alike from 3.9 to
3.13, which checks the code it is given; the code is cached under the exact Python version (see
cache.py), and whatever does not fit is compiled by `re` as usual.
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
# The pattern's flags, its code as 4-byte words, its number of groups, and its named groups.
Code = tuple[int, bytes, int, dict[str, int]]
MaybeCode = Optional[Code]
# Codes kept in the cache at most: the package's regexes and the rule patterns a log met. Past
# it, only the ones this run used are kept.
TABLE_SIZE = 4096

_table: dict[tuple[Any, int], Code] | None = None
_used: set[tuple[Any, int]] = set()
_added: dict[tuple[Any, int], Code] = {}
_built: dict[tuple[Any, int], re.Pattern[Any]] = {}  # as `re` keeps what it compiled


def regex(source: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """`re.compile(source, flags)`, rebuilt from the code an earlier run cached if it can be."""
    key = (source, int(flags))
    pattern = _built.get(key)
    if pattern is not None:
        return pattern
    code = _cached().get(key)
    if code is not None:
        _used.add(key)
        pattern = rebuild(source, code, flags)
    else:
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
            return _rebuilt(source, code), code
        except Exception:  # a pattern `re` compiles another way, or code that does not fit
            pass
    return re.compile(source, flags), None


def rebuild(source: AnyStr, code: MaybeCode, flags: int = 0) -> re.Pattern[AnyStr]:
    """The pattern `compile_with_code` gave for `source`, from its code if it still fits."""
    if REBUILDS and code is not None:
        try:
            return _rebuilt(source, code)
        except Exception:  # cached by another build of the same version, or a damaged cache
            pass
    return re.compile(source, flags)


def _rebuilt(source: AnyStr, code: Code) -> re.Pattern[AnyStr]:
    flags, words, groups, names = code
    ints = array.array("I")
    ints.frombytes(words)
    numbered: list[str | None] = [None] * groups
    for name, index in names.items():
        numbered[index] = name
    return _sre.compile(source, flags, ints.tolist(), groups - 1, dict(names), tuple(numbered))


def _cached() -> dict[tuple[Any, int], Code]:
    """The codes an earlier run cached, read on the first regex; the new ones are written at exit."""
    global _table
    if _table is None:
        stored = read_cache("regexes", "table") if REBUILDS else None
        _table = stored if isinstance(stored, dict) else {}
        atexit.register(save)
    return _table


def save() -> None:
    """Cache the codes of the regexes compiled since the table was read, if any."""
    if not _added or _table is None:
        return
    kept = {**_table, **_added}
    if len(kept) > TABLE_SIZE:
        kept = {key: code for key, code in kept.items() if key in _used or key in _added}
    write_cache("regexes", "table", kept)
    _table.update(_added)
    _added.clear()
