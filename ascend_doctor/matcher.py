"""Rules compiled for matching: literal index, prefilter, and the full patterns with a time limit."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import regex

from ascend_doctor.literals import Literal, required_literals
from ascend_doctor.model import Rule
from ascend_doctor.prefilter import make_prefilter

PATTERN_TIMEOUT = 0.25
MAX_TIMEOUTS = 5  # a pattern that runs out of time this often is not tried again in this run


@dataclass(frozen=True)
class PatternRef:
    rule_index: int
    pattern_index: int


@dataclass(frozen=True)
class Hit:
    """A rule that matched one segment: which pattern and what it captured."""

    rule_index: int
    pattern_index: int
    captures: tuple[tuple[str, str], ...]


class Matcher:
    """Matches clean text segments against the rules, trying only rules whose literal is present."""

    def __init__(self, rules: Sequence[Rule], engine: str = "auto") -> None:
        self.rules = tuple(rules)
        self._compiled: dict[PatternRef, Any] = {}
        self._index: list[tuple[str, bool, tuple[PatternRef, ...]]] = []
        self.unfiltered: list[PatternRef] = []
        by_literal: dict[tuple[str, bool], list[PatternRef]] = {}
        literals: list[Literal] = []
        for rule_index, rule in enumerate(self.rules):
            for pattern_index, pattern in enumerate(rule.patterns):
                ref = PatternRef(rule_index, pattern_index)
                found = required_literals(pattern)
                if not found:
                    self.unfiltered.append(ref)
                    continue
                for literal in found:
                    key = (
                        literal.text.lower() if literal.ignore_case else literal.text,
                        literal.ignore_case,
                    )
                    if key not in by_literal:
                        literals.append(literal)
                    by_literal.setdefault(key, []).append(ref)
        self._index = [(text, folded, tuple(refs)) for (text, folded), refs in by_literal.items()]
        self.prefilter = make_prefilter(literals, engine, complete=not self.unfiltered)
        self.timeouts: dict[str, int] = {}  # rule id -> lines on which one of its patterns ran out of time
        self._expired: dict[PatternRef, int] = {}

    def _pattern(self, ref: PatternRef) -> Any:
        compiled = self._compiled.get(ref)
        if compiled is None:
            compiled = regex.compile(self.rules[ref.rule_index].patterns[ref.pattern_index])
            self._compiled[ref] = compiled
        return compiled

    def candidates(self, text: str) -> list[PatternRef]:
        """Patterns worth running on `text`: those whose literal it contains, in rule order."""
        lowered: str | None = None
        refs: set[PatternRef] = set(self.unfiltered)
        for literal, folded, literal_refs in self._index:
            if folded:
                if lowered is None:
                    lowered = text.lower()
                if literal in lowered:
                    refs.update(literal_refs)
            elif literal in text:
                refs.update(literal_refs)
        return sorted(refs, key=lambda ref: (ref.rule_index, ref.pattern_index))

    def search(self, ref: PatternRef, texts: Sequence[str]) -> Any:
        """The pattern's match in the first of `texts` (one line, alone and joined with neighbours),
        each search under a time limit. A time-out gives up on the line, counted once; after
        MAX_TIMEOUTS lines the pattern is dropped, so a backtracking pattern cannot stall a run."""
        if self._expired.get(ref, 0) >= MAX_TIMEOUTS:
            return None
        compiled = self._pattern(ref)
        for text in texts:
            try:
                found = compiled.search(text, timeout=PATTERN_TIMEOUT)
            except TimeoutError:
                self._expired[ref] = self._expired.get(ref, 0) + 1
                rule_id = self.rules[ref.rule_index].id
                self.timeouts[rule_id] = self.timeouts.get(rule_id, 0) + 1
                return None
            if found is not None:
                return found
        return None

    def match(self, text: str, before: str = "", after: str = "") -> list[Hit]:
        """Every rule matching `text`, or `text` joined with a neighbour line (a message
        hard-wrapped across lines), once each."""
        hits: list[Hit] = []
        done: set[int] = set()
        joined = [text]
        if after:
            joined += [text + after, f"{text} {after}"]
        if before:
            joined += [before + text, f"{before} {text}"]
        for ref in self.candidates(text):
            if ref.rule_index in done:
                continue
            found = self.search(ref, joined)
            if found is not None:
                done.add(ref.rule_index)
                captures = tuple((k, v) for k, v in found.groupdict().items() if v is not None)
                hits.append(Hit(ref.rule_index, ref.pattern_index, captures))
        return hits
