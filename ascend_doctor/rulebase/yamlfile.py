"""Safe YAML loading for rule files: line numbers kept, aliases and duplicate keys refused."""

from __future__ import annotations

from typing import Any

import yaml
from yaml.composer import Composer, ComposerError

MAX_DEPTH = 50  # a rule file needs about 6

try:
    _Base: type = yaml.CSafeLoader
except AttributeError:  # PyYAML built without libyaml
    _Base = yaml.SafeLoader


class LineDict(dict):  # type: ignore[type-arg]
    """A mapping that remembers the 1-based line it started on, and each key's."""

    line: int = 0
    key_lines: dict[Any, int]


class _RuleFileLoader(_Base):  # type: ignore[misc,valid-type]
    """Safe loader: no Python tags, no aliases (no alias bombs), no silently repeated keys, at most
    MAX_DEPTH levels of nesting.

    Nodes are built by PyYAML's Python composer, counting depth, over libyaml's parser: libyaml's own
    composer recurses in C and crashes the process (SIGSEGV) on some 40,000 nested brackets.
    """

    check_node = Composer.check_node
    get_node = Composer.get_node
    get_single_node = Composer.get_single_node
    compose_document = Composer.compose_document
    compose_scalar_node = Composer.compose_scalar_node
    compose_sequence_node = Composer.compose_sequence_node
    compose_mapping_node = Composer.compose_mapping_node

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        Composer.__init__(self)
        self.depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.depth >= MAX_DEPTH:
            mark = self.peek_event().start_mark
            raise ComposerError(None, None, f"nested more than {MAX_DEPTH} levels deep", mark)
        self.depth += 1
        try:
            return Composer.compose_node(self, parent, index)
        finally:
            self.depth -= 1

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        if node in self.constructed_objects:
            raise yaml.constructor.ConstructorError(
                None, None, "aliases (*name) are not allowed in rule files", node.start_mark
            )
        return super().construct_object(node, deep=deep)


def _construct_mapping(loader: _RuleFileLoader, node: yaml.MappingNode) -> Any:
    data = LineDict()
    data.line = node.start_mark.line + 1
    data.key_lines = {}
    yield data
    for key_node, _ in node.value:
        key = key_node.value if isinstance(key_node, yaml.ScalarNode) else id(key_node)
        if key in data.key_lines:
            raise yaml.constructor.ConstructorError(
                None, None, f"key {key!r} appears twice", key_node.start_mark
            )
        data.key_lines[key] = key_node.start_mark.line + 1
    data.update(loader.construct_mapping(node))


_RuleFileLoader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)


def load_yaml(text: str) -> Any:
    """Parse YAML text; raises yaml.YAMLError (with a mark) on anything unsafe or malformed."""
    return yaml.load(text, Loader=_RuleFileLoader)


def error_line(exc: yaml.YAMLError) -> int:
    """The 1-based line a YAML error points at, or 0."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    return mark.line + 1 if mark is not None else 0
