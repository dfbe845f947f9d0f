"""What a rule's prose must not hold that its schema cannot see: a stray space in Chinese text.

YAML folds a line break inside a `>-` block into a space, so Chinese text wrapped across two lines
reads `对端可能已 崩溃`. Patterns and examples are log text and are not checked.
"""

from __future__ import annotations

from collections.abc import Iterator

import regex

from ascend_doctor.model import Rule, Text

# Han, kana, CJK punctuation (、。「」) and full-width forms (，：；（）).
CJK = r"[\p{Han}\p{Hiragana}\p{Katakana}\u3001-\u303f\uff01-\uff60]"
FULL_WIDTH_PUNCTUATION = r"[\u3001-\u303f\uff01-\uff60]"
# Between two CJK characters, or beside a full-width mark, which carries its own space
# (`使用重计算、 ZeRO`, `含 NCCL； NPU`).
_STRAY_SPACE = regex.compile(rf"{CJK}\s+{CJK}|{FULL_WIDTH_PUNCTUATION}\s+\S|\S\s+{FULL_WIDTH_PUNCTUATION}")


def _texts(rule: Rule) -> Iterator[tuple[str, Text]]:
    yield "title", rule.title
    yield "cause", rule.cause
    yield "fix", rule.fix
    for index, remedy in enumerate(rule.env):
        yield f"env[{index}].why", remedy.why


def prose_problems(rule: Rule) -> list[str]:
    """One message per text of the rule that holds a space between two CJK characters or beside
    a full-width punctuation mark."""
    problems = []
    for field, text in _texts(rule):
        for lang, value in (("en", text.en), ("zh", text.zh)):
            found = _STRAY_SPACE.search(value)
            if found:
                problems.append(
                    f"{field}.{lang} has a stray space in Chinese text: {found.group()!r} "
                    "(a line break inside a YAML `>-` block becomes a space: join the two lines there)"
                )
    return problems
