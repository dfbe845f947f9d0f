"""The package's folders are its layers: imports point down the pipeline only, and no module imports
itself through others. Every import counts, those inside functions too (they are the lazy ones that
keep start-up fast, and still a dependency)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "ascend_doctor"

# What each layer may import besides itself. `read` and `rulebase` are peers that know nothing of
# each other; the matcher gets its rules as `model.Rule`s, never from the rule base.
MAY_IMPORT: dict[str, set[str]] = {
    "spine": set(),  # __init__, model, errors, config, cache, regexes
    "read": {"spine"},
    "rulebase": {"spine"},
    "match": {"spine", "read"},
    "watch": {"spine", "read"},  # a job's output passed through while it is read
    "engine": {"spine", "read", "rulebase", "match"},  # engine, ranking
    "check": {"spine", "rulebase", "engine"},  # `check`: the machine; --deep hands its probe to the engine
    "cluster": {"spine", "read", "rulebase", "match", "engine"},  # reports as merge input
    "render": {"spine", "read", "rulebase", "match", "engine", "check", "cluster"},
    "cli": {"spine", "read", "rulebase", "match", "engine", "check", "cluster", "render", "watch"},
    "main": {"spine", "cli"},  # __main__
}
TOP = {
    "engine": "engine",
    "ranking": "engine",
    "uncaught": "engine",
    "outcome": "engine",
    "gpu_job": "engine",
    "stated_versions": "engine",
    "__main__": "main",
}


def _modules() -> dict[str, Path]:
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ("ascend_doctor", *path.relative_to(PACKAGE).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


MODULES = _modules()


def layer(module: str) -> str:
    parts = module.split(".")[1:]
    if not parts:
        return "spine"
    if len(parts) == 1 and not (PACKAGE / parts[0]).is_dir():
        return TOP.get(parts[0], "spine")
    return parts[0]


def imports(module: str) -> set[str]:
    """The package's modules that `module` imports (`from package import module` names the module)."""
    found = set()
    package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(MODULES[module].read_text("utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    [*package.split(".")[: len(package.split(".")) - node.level + 1], base]
                ).strip(".")
            names = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names
            ]
        else:
            continue
        found.update(name for name in names if name in MODULES and name != module)
    return found


GRAPH = {module: imports(module) for module in MODULES}


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(GRAPH[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(GRAPH):
        if module not in index:
            visit(module)
    return found


def test_every_module_has_a_known_layer() -> None:
    assert {module: layer(module) for module in MODULES if layer(module) not in MAY_IMPORT} == {}


def test_imports_point_down_the_layers() -> None:
    upward = sorted(
        f"{module} ({layer(module)}) imports {target} ({layer(target)})"
        for module, targets in GRAPH.items()
        for target in targets
        if layer(target) != layer(module) and layer(target) not in MAY_IMPORT[layer(module)]
    )
    assert upward == []


def test_no_import_circles() -> None:
    assert _cycles() == []


if __name__ == "__main__":  # `python tests/test_layers.py` prints the graph's problems
    for module, targets in sorted(GRAPH.items()):
        for target in sorted(targets):
            if layer(target) != layer(module) and layer(target) not in MAY_IMPORT[layer(module)]:
                print(f"upward: {module} -> {target}")
    for cycle in _cycles():
        print("cycle:", " <-> ".join(cycle))
