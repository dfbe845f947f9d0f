"""Regexes rebuilt from the code `re` compiled them to, so that the code can be cached.

`re` cannot keep a compiled pattern: pickled, it is its source, compiled again on loading. The
pure-Python prefilter's tries take ~180 ms a run to compile, which is most of the time a log of a
few megabytes takes; rebuilt from their code, ~2 ms. This uses CPython's private `_sre.compile`,
called alike from 3.9 to 3.13. The code is cached under the exact Python version (see cache.py),
and whatever does not fit is compiled by `re` as usual.
"""

from __future__ import annotations

import contextlib
import re
from typing import Optional

try:
    import _sre
    from re import _compiler, _parser  # type: ignore[attr-defined]
except ImportError:  # Python 3.9 and 3.10 name the modules so, or an interpreter without `_sre`
    try:
        import _sre
        import sre_compile as _compiler
        import sre_parse as _parser
    except ImportError:
        _sre = None

Code = tuple[int, list, int]  # the pattern's flags, its code, its number of groups
MaybeCode = Optional[Code]


def compile_with_code(source: bytes) -> tuple[re.Pattern[bytes], MaybeCode]:
    """`source` compiled, and the code that rebuilds it (None: it cannot be rebuilt)."""
    if _sre is not None:
        with contextlib.suppress(Exception):
            parsed = _parser.parse(source, 0)
            if not parsed.state.groupdict:
                ints = list(map(int, _compiler._code(parsed, 0)))  # opcodes are named ints
                code: Code = (parsed.state.flags, ints, parsed.state.groups)
                return rebuild(source, code), code
    return re.compile(source), None


def rebuild(source: bytes, code: MaybeCode) -> re.Pattern[bytes]:
    """The pattern `compile_with_code` gave for `source`, from its code if it still fits."""
    if _sre is not None and code is not None:
        with contextlib.suppress(Exception):
            flags, ints, groups = code
            return _sre.compile(source, flags, ints, groups - 1, {}, (None,) * groups)
    return re.compile(source)
