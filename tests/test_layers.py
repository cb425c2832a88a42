"""The package's layers (docs/architecture.md): imports point down, never in a circle.

Every module of ``src/langgraph_librarian`` is given a layer below; an import (at module
level, inside a function or under ``TYPE_CHECKING``: all count) may only reach the same
layer or a lower one, and the import graph has no cycle. A new module must be placed in
a layer here before it can land, which is the point: the placement is a decision.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = "langgraph_librarian"
SRC = Path(__file__).resolve().parents[1] / "src" / PACKAGE

LAYERS = ("engine", "kit", "features", "faces", "apps")

# Longest matching prefix wins; a prefix names a module or a whole subpackage.
PLACEMENT: dict[str, str] = {
    # engine: entries, indexing, selection, hydration, tokens, embeddings, stores, and the
    # private primitives they share (_engine: message text, the history view, model calls
    # and what their failures mean, the packaged models)
    "_engine": "engine",
    "errors": "engine",
    "minilm": "engine",
    "embeddings": "engine",
    "entry": "engine",
    "tokens": "engine",
    "state": "engine",
    "config": "engine",
    "hydrate": "engine",
    "index": "engine",
    "select": "engine",
    "stores": "engine",
    # kit: reading the run and the state, the node class, caches, background work
    "_kit": "kit",
    # features: the Librarian turn, the running summary, scoped recall, the tool librarian
    "_librarian": "features",
    "memory._summarizer": "features",
    "memory._prompts": "features",
    "memory._facts": "features",
    "memory._cut": "features",
    "memory._history": "features",
    "memory._result": "features",
    "memory._adapter": "features",
    "recall._memory": "features",
    "recall._records": "features",
    "recall._scope": "features",
    "recall._select": "features",
    "recall._result": "features",
    "recall._render": "features",
    "recall._store": "features",
    "recall._capture": "features",
    "recall._turn": "features",
    "tools.index": "features",
    "tools.calibration": "features",
    "tools._lexical": "features",
    "tools._persist": "features",
    # faces: graph nodes, create_agent middleware, pre_model_hook nodes, agent tools, and
    # the public packages that export them
    "": "faces",  # the top-level package (__init__)
    "nodes": "faces",
    "middleware": "faces",
    "graph": "faces",
    "context": "faces",  # what a chat app sends its model under each strategy
    "memory": "faces",
    "recall": "faces",
    "tools": "faces",
    # apps: the command line, the demo, the web chat
    "_apps": "apps",
    "cli": "apps",
    "__main__": "apps",
    "demo": "apps",
    "ui": "apps",
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def layer_of(module: str) -> str:
    best = None
    for prefix, layer in PLACEMENT.items():
        if (module == prefix or module.startswith(prefix + ".") or prefix == "") and (
            best is None or len(prefix) > len(best[0])
        ):
            best = (prefix, layer)
    assert best is not None
    if best[0] == "" and module:
        raise AssertionError(
            f"module {PACKAGE}.{module} has no layer: place it in tests/test_layers.py "
            "(and docs/architecture.md)"
        )
    return best[1]


def _imports(module: str, path: Path, known: set[str]) -> set[str]:
    """Package-internal modules ``module`` imports (module names relative to the package)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    here = module.split(".") if module else []
    base_parts = here if is_package else here[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base_parts[: len(base_parts) - (node.level - 1)]
                mod = ".".join([PACKAGE, *anchor, *([node.module] if node.module else [])])
            else:
                mod = node.module or ""
            # ``from pkg import name``: the submodule when ``name`` is one, else ``pkg``
            targets = [
                f"{mod}.{a.name}" if _relative(f"{mod}.{a.name}") in known else mod
                for a in node.names
            ]
        for target in targets:
            if target != PACKAGE and not target.startswith(PACKAGE + "."):
                continue
            name = _relative(target)
            while name not in known and "." in name:
                name = name.rsplit(".", 1)[0]
            if name in known and name != module:
                found.add(name)
    return found


def _relative(target: str) -> str:
    return target[len(PACKAGE) + 1 :] if target != PACKAGE else ""


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        graph[module] = _imports(module, path, known)
    return graph


def test_every_module_has_a_layer() -> None:
    for module in _modules():
        assert layer_of(module) in LAYERS


def test_imports_point_down() -> None:
    graph = _graph()
    upward = []
    for module, targets in graph.items():
        mine = LAYERS.index(layer_of(module))
        for target in sorted(targets):
            theirs = LAYERS.index(layer_of(target))
            if theirs > mine:
                upward.append(
                    f"{module or PACKAGE} ({layer_of(module)}) -> {target} ({layer_of(target)})"
                )
    assert not upward, "imports from a lower layer to a higher one:\n" + "\n".join(upward)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circles() -> None:
    cycles = _cycles(_graph())
    assert not cycles, f"import circles: {cycles}"


def test_the_checker_sees_a_circle_and_an_upward_import() -> None:
    # The checks above must be able to fail: a made-up graph with both faults.
    graph = {"a": {"b"}, "b": {"a"}, "c": set()}
    assert _cycles(graph) == [["a", "b"]]
    with pytest.raises(AssertionError, match="has no layer"):
        layer_of("brand_new_module")
    assert LAYERS.index(layer_of("select.local")) < LAYERS.index(layer_of("nodes"))
