"""The on-disk cache of compiled rules and matcher indexes: pickles under $XDG_CACHE_HOME/ascend-doctor,
keyed by the tool's version, the Python and what they were built from. The rule base and the
matcher both keep theirs here; neither reaches into the other for it."""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
import time
import zlib
from typing import Any

from ascend_doctor import __version__

# Bump when what is pickled changes shape; the package version is part of the key as well.
CACHE_FORMAT = 5  # 5: the pickled classes moved into the package folders

# Cache files kept per kind (rules, matcher, prefilter): rule sets, versions and Pythons in use.
KEEP_PER_KIND = 8
STALE_TEMPORARY_NS = 3600 * 10**9  # a write takes milliseconds: an hour-old temporary is abandoned


def cache_dir() -> str:
    """Where compiled rules and matcher indexes are kept ($XDG_CACHE_HOME/ascend-doctor)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ascend-doctor")


def read_cache(kind: str, key: str) -> Any:
    """The object cached for `key` by this version of the tool and Python, or None."""
    full = _full_key(key)
    path = _cache_file(kind, full)
    stored = _read_pickle(path)
    if not (isinstance(stored, tuple) and len(stored) == 2 and stored[0] == full):
        return None
    with contextlib.suppress(OSError):  # a read-only cache is still read
        os.utime(path)  # pruning keeps the files used last, not those written last
    return stored[1]


def write_cache(kind: str, key: str, value: Any) -> None:
    """Cache `value` for `key`; a read-only home only costs start-up time."""
    full = _full_key(key)
    path = _cache_file(kind, full)
    if _write_pickle(path, (full, value)):
        _prune(kind, path)


def _prune(kind: str, kept: str) -> None:
    """Remove all but the KEEP_PER_KIND files of a kind used last, and never `kept`. Every edit of a
    rule file, upgrade or new Python writes a new file (~400 KB for the rules); nothing else
    would ever remove the old ones. Also the temporary files of writers killed mid-write."""
    try:
        with os.scandir(os.path.dirname(kept)) as entries:
            found = [
                (entry.stat().st_mtime_ns, entry.name, entry.path)
                for entry in entries
                if entry.name.startswith(f"{kind}-") and entry.path != kept
            ]
    except OSError:
        return  # another process is pruning it, or the directory cannot be listed
    cached = sorted((mtime, path) for mtime, name, path in found if name.endswith(".pickle"))
    abandoned = time.time_ns() - STALE_TEMPORARY_NS
    removed = [path for _mtime, path in cached[: max(0, len(cached) - KEEP_PER_KIND + 1)]]
    removed += [path for mtime, name, path in found if name.endswith(".tmp") and mtime < abandoned]
    for path in removed:
        with contextlib.suppress(OSError):  # another process removed it first
            os.unlink(path)


def _full_key(key: str) -> str:
    return f"{CACHE_FORMAT}|{__version__}|{sys.version}|{key}"


def _cache_file(kind: str, full_key: str) -> str:
    """The file for a key. Its name is a checksum, not a cryptographic hash (importing hashlib
    costs every run ~4 ms): the whole key is stored with the value and compared on reading, so
    two keys that share a name only miss the cache."""
    data = full_key.encode("utf-8", "surrogatepass")
    return os.path.join(cache_dir(), f"{kind}-{zlib.crc32(data):08x}{zlib.adler32(data):08x}.pickle")


def _read_pickle(path: str) -> Any:
    try:
        with open(path, "rb") as handle:
            return pickle.load(handle)
    except Exception:  # a missing, stale or corrupt cache is simply rebuilt
        return None


def _write_pickle(path: str, value: Any) -> bool:
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temporary = f"{os.path.splitext(path)[0]}.{os.getpid()}.tmp"
        with open(temporary, "wb") as handle:
            pickle.dump(value, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temporary, path)
    except OSError:
        return False  # a read-only home only costs start-up time
    return True
