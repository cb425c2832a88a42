"""The public API is small, deliberate and documented (docs/api.md).

Public means: a name in ``__all__`` of the top-level package or of a module whose dotted
path has no part starting with ``_``. Implementation modules may list in ``__all__`` only
names that are public anyway (re-exported by their package), so the public surface is the
union below, and docs/api.md documents exactly that union, module by module.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import langgraph_librarian

DOCS = Path(__file__).resolve().parents[1] / "docs" / "api.md"
LIMIT = 80

# Every name the spec's README (and the other specs) use from this package.
SPEC_NAMES = {
    "langgraph_librarian": {
        "BaseIndexStore",
        "FileIndexStore",
        "IndexEntry",
        "LibrarianConfig",
        "LibrarianState",
        "create_librarian_graph",
        "create_librarian_node",
        "index_messages",
        "select_and_hydrate",
    },
    "langgraph_librarian.hydrate": {"hydrate"},
    "langgraph_librarian.memory": {"should_summarize", "summary_message"},
    "langgraph_librarian.tools": {"ToolIndex"},
    "langgraph_librarian.recall": {"MissingScopeError"},
}


def public_modules() -> dict[str, list[str]]:
    found = {"langgraph_librarian": list(langgraph_librarian.__all__)}
    for info in pkgutil.walk_packages(langgraph_librarian.__path__, "langgraph_librarian."):
        if any(part.startswith("_") for part in info.name.split(".")[1:]):
            continue
        module = importlib.import_module(info.name)
        names = list(getattr(module, "__all__", []))
        if names:
            found[info.name] = names
    return found


def documented() -> dict[str, set[str]]:
    """``{module: names}`` from docs/api.md (``## `module` `` headings, `` | `name` | `` rows)."""
    out: dict[str, set[str]] = {}
    module = None
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        heading = re.match(r"^## `([\w.]+)`", line)
        if heading:
            module = heading.group(1)
            out[module] = set()
            continue
        row = re.match(r"^\| `(\w+)` \|", line)
        if row and module is not None:
            out[module].add(row.group(1))
    return out


def test_the_public_surface_is_at_most_80_names() -> None:
    names = set().union(*map(set, public_modules().values()))
    assert len(names) <= LIMIT, sorted(names)


def test_every_public_name_is_documented() -> None:
    docs = documented()
    modules = public_modules()
    for module, names in docs.items():
        exported = set(importlib.import_module(module).__all__)
        assert names == exported, (
            f"{module}: exported but not in docs/api.md: {sorted(exported - names)}; "
            f"in docs/api.md but not exported: {sorted(names - exported)}"
        )
    documented_names = set().union(*docs.values())
    for module, names in modules.items():
        # implementation modules (select.local, stores.file...) export nothing of their own
        assert set(names) <= documented_names, (module, sorted(set(names) - documented_names))


def test_the_documented_counts_match() -> None:
    text = DOCS.read_text(encoding="utf-8")
    total = len(set().union(*map(set, public_modules().values())))
    assert f"**{total} public names**" in text
    for module, names in documented().items():
        assert f"| `{module}` | {len(names)} |" in text, module


def test_the_specs_names_are_kept() -> None:
    for module, names in SPEC_NAMES.items():
        exported = set(importlib.import_module(module).__all__)
        assert names <= exported, (module, names - exported)


def test_public_classes_and_functions_have_docstrings() -> None:
    for module, names in public_modules().items():
        imported = importlib.import_module(module)
        for name in names:
            value = getattr(imported, name)
            if inspect.isclass(value) or inspect.isfunction(value):
                assert (value.__doc__ or "").strip(), f"{module}.{name} has no docstring"


def test_the_top_level_names_are_imported_when_first_used() -> None:
    """The package imports none of its dependencies until a name is used (the
    ``librarian`` command handles Ctrl-C only once it runs); every name resolves, and
    so does a submodule not imported yet."""
    import subprocess
    import sys

    code = (
        "import sys, langgraph_librarian as ll\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('langchain_core', 'langgraph'))\n"
        "assert heavy == [], heavy\n"
        "from langgraph_librarian import LibrarianConfig, LIBRARIAN_TAG\n"
        "assert LIBRARIAN_TAG == 'langgraph_librarian'\n"
        "assert all(getattr(ll, name) is not None for name in ll.__all__)\n"
        "assert set(ll.__all__) <= set(dir(ll))\n"
        "assert ll.memory.RunningSummarizer.__name__ == 'RunningSummarizer'\n"
        "try:\n    ll.no_such_name\nexcept AttributeError:\n    pass\n"
        "else:\n    raise AssertionError('no AttributeError')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_the_lazy_package_answers_introspection_like_a_plain_one():
    import langgraph_librarian as package

    # hasattr must not raise for a name no module could have
    assert not hasattr(package, "x.y") and getattr(package, "..", None) is None
    assert not hasattr(package, "no_such_name")
    listed = dir(package)
    assert set(package.__all__) <= set(listed)
    assert "Any" not in listed and "importlib" not in listed and "TYPE_CHECKING" not in listed
    import langgraph_librarian.memory

    assert "memory" in dir(package)
