"""Regexes rebuilt from the code `re` compiled them to, so that the code can be cached.

`re` cannot keep a compiled pattern: pickled, it is its source, compiled again on loading. The
pure-Python prefilter's tries take ~180 ms a run to compile, which is most of the time a log of a
few megabytes takes; rebuilt from their code, ~2 ms. This uses CPython's private `_sre.compile`,
called alike from 3.9 to 3.13, which checks the code it is given. The code is cached under the
exact Python version (see cache.py), and whatever does not fit is compiled by `re` as usual.
"""

from __future__ import annotations

import array
import re
import sys
from typing import Optional

try:
    import _sre
    from re import _compiler, _parser  # type: ignore[attr-defined]
except ImportError:  # Python 3.9 and 3.10 name the modules so
    import _sre
    import sre_compile as _compiler
    import sre_parse as _parser

# Another interpreter may have an `_sre` that does not check the code it is given.
REBUILDS = sys.implementation.name == "cpython"
Code = tuple[int, bytes, int]  # the pattern's flags, its code as 4-byte words, its number of groups
MaybeCode = Optional[Code]


def compile_with_code(source: bytes) -> tuple[re.Pattern[bytes], MaybeCode]:
    """`source` compiled, and the code that rebuilds it (None: it cannot be rebuilt)."""
    if REBUILDS:
        try:
            parsed = _parser.parse(source, 0)
            if not parsed.state.groupdict:
                code: Code = (
                    parsed.state.flags,
                    array.array("I", _compiler._code(parsed, 0)).tobytes(),
                    parsed.state.groups,
                )
                return _rebuilt(source, code), code
        except Exception:  # a pattern `re` compiles another way, or code that does not fit
            pass
    return re.compile(source), None


def rebuild(source: bytes, code: MaybeCode) -> re.Pattern[bytes]:
    """The pattern `compile_with_code` gave for `source`, from its code if it still fits."""
    if REBUILDS and code is not None:
        try:
            return _rebuilt(source, code)
        except Exception:  # cached by another build of the same version, or a damaged cache
            pass
    return re.compile(source)


def _rebuilt(source: bytes, code: Code) -> re.Pattern[bytes]:
    flags, words, groups = code
    ints = array.array("I")
    ints.frombytes(words)
    return _sre.compile(source, flags, ints.tolist(), groups - 1, {}, (None,) * groups)
