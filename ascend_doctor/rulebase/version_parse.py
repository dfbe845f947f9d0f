"""Version strings as Ascend prints them: `8.0.RC3`, `8.0.0.beta1` (the community edition of 8.0.0),
`9.0.0-beta.1`, `8.5.0.alpha001`, drivers in lower case with a build (`24.1.rc2.2`), wheels with
`.post10` or `rc1`, table wildcards (`25.5.X`)."""

from __future__ import annotations

import re

_DIGITS = re.compile(r"\d+")
_TOKEN = re.compile(r"(\d+)|([a-z]+)\.?(\d*)")
_COMMUNITY = re.compile(r"\.beta\d+$")  # 8.0.RC3.beta1 is 8.0.RC3, released as the community edition
_PRE = {"dev": 0, "alpha": 1, "a": 1, "beta": 2, "b": 2, "rc": 3}
_END = (4, 0)  # a release with nothing after it sorts after its pre-releases, before its builds

Key = tuple[tuple[int, int], ...]


def normal(version: str) -> str:
    """Lower case, no leading `v`, no local part (`+git4c901a4`, `+cpu`), no community suffix."""
    text = version.strip().lower().split("+", 1)[0]
    text = text[1:] if text.startswith("v") else text
    return _COMMUNITY.sub("", text)


def key(version: str) -> Key:
    """A sort key: 24.1.RC3 < 24.1.0 < 24.1.0.1; 2.1.0rc1 < 2.1.0 < 2.1.0.post1."""
    parts: list[tuple[int, int]] = []
    for number, word, count in _TOKEN.findall(normal(version).replace("-", ".")):
        if number:
            parts.append((5, int(number)))
        elif word == "post":
            parts.append((6, int(count or 0)))
        elif word in _PRE:
            parts.append((_PRE[word], int(count or 0)))
    return (*parts, _END)


def release(version: str) -> tuple[int, ...]:
    """The leading numbers: `2.1.0+cpu` -> (2, 1, 0), `2.10.0rc2` -> (2, 10, 0), `2.5.1.post1.dev20250619`
    -> (2, 5, 1)."""
    numbers = []
    for piece in normal(version).split("."):
        digits = _DIGITS.match(piece)
        if digits is None:
            break
        numbers.append(int(digits.group()))
        if digits.end() < len(piece):  # `0rc1`: the release ends here
            break
    return tuple(numbers)


def shown(numbers: tuple[int, ...]) -> str:
    return ".".join(map(str, numbers))


def fits(version: str, pattern: str) -> bool:
    """Whether `version` is the release `pattern` names: equal, a build of it (driver 24.1.rc2.2 is
    HDK 24.1.RC2), or inside a wildcard (`25.5.X`)."""
    wanted = normal(pattern)
    have = normal(version)
    if wanted.endswith(".x"):
        return have.startswith(wanted[:-1])
    build = have[len(wanted) + 1 :] if have.startswith(wanted + ".") else ""
    return have == wanted or build[:1].isdigit()  # 8.5.0.alpha001 is not a build of 8.5.0
