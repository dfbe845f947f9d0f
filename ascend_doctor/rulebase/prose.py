"""What a rule's prose must not hold that its schema cannot see: a space between two CJK characters.

YAML folds a line break inside a `>-` block into a space, so Chinese text wrapped across two lines
reads `对端可能已 崩溃`. Patterns and examples are log text and are not checked.
"""

from __future__ import annotations

from collections.abc import Iterator

import regex

from ascend_doctor.model import Rule, Text

# Han, kana, CJK punctuation (、。「」) and full-width forms (，：；（）).
CJK = r"[\p{Han}\p{Hiragana}\p{Katakana}\u3001-\u303f\uff01-\uff60]"
_SPACE_BETWEEN_CJK = regex.compile(rf"{CJK}\s+{CJK}")


def _texts(rule: Rule) -> Iterator[tuple[str, Text]]:
    yield "title", rule.title
    yield "cause", rule.cause
    yield "fix", rule.fix
    for index, remedy in enumerate(rule.env):
        yield f"env[{index}].why", remedy.why


def prose_problems(rule: Rule) -> list[str]:
    """One message per text of the rule that holds a space between two CJK characters."""
    problems = []
    for field, text in _texts(rule):
        for lang, value in (("en", text.en), ("zh", text.zh)):
            found = _SPACE_BETWEEN_CJK.search(value)
            if found:
                problems.append(
                    f"{field}.{lang} has a space between two CJK characters: {found.group()!r} "
                    "(a line break inside a YAML `>-` block becomes a space: join the two lines there)"
                )
    return problems
