"""Scope resolution and scope ids -> store namespace labels."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langgraph.store.base import _validate_namespace
from langgraph.store.memory import InMemoryStore

from langgraph_librarian.recall import (
    MissingScopeError,
    RecallScope,
    ScopeMemory,
    resolve_scope,
    scope_key,
)
from langgraph_librarian.recall._scope import (
    SCOPE_ENV_VAR,
    RecallConfigError,
    check_max_bytes,
    run_max_bytes,
)

HOSTILE = [
    "../../etc/passwd",
    "a/b",
    "..",
    ".",
    "a.b",
    "\x00zero",
    "nul\x00middle",
    "lone\ud800surrogate",
    "\udfff",
    "x" * 10_000,
    "名前🙂",
    "'; DROP TABLE store; --",
    "%_*?[]",
    " ",
    "~sha",
    "user:42\n",
]


def test_explicit_scope_wins_over_environment(monkeypatch):
    monkeypatch.setenv(SCOPE_ENV_VAR, "from-env")
    assert resolve_scope(RecallScope(scope_id="user:42")) == "user:42"
    assert resolve_scope({"scope_id": "dict-scope"}) == "dict-scope"


def test_environment_is_the_fallback(monkeypatch):
    monkeypatch.setenv(SCOPE_ENV_VAR, "from-env")
    assert resolve_scope(None) == "from-env"
    assert resolve_scope(RecallScope()) == "from-env"
    assert resolve_scope(object()) == "from-env"  # a context without scope_id


def test_missing_scope_is_an_error_not_a_shared_default(monkeypatch):
    monkeypatch.delenv(SCOPE_ENV_VAR, raising=False)
    with pytest.raises(MissingScopeError, match=SCOPE_ENV_VAR):
        resolve_scope(None)
    with pytest.raises(MissingScopeError):
        resolve_scope(RecallScope())
    monkeypatch.setenv(SCOPE_ENV_VAR, "")  # an empty variable is not a scope
    with pytest.raises(MissingScopeError):
        resolve_scope(None)


def test_explicit_empty_or_wrong_type_scope_is_refused(monkeypatch):
    monkeypatch.setenv(SCOPE_ENV_VAR, "from-env")
    with pytest.raises(MissingScopeError):  # never silently replaced by the env scope
        resolve_scope(RecallScope(scope_id=""))
    with pytest.raises(RecallConfigError, match="string"):
        resolve_scope({"scope_id": 42})


def test_any_context_with_a_scope_id_attribute_works():
    @dataclasses.dataclass
    class AppContext:
        user_name: str
        scope_id: str

    assert resolve_scope(AppContext("ann", "tenant:acme")) == "tenant:acme"


def test_plain_ids_are_readable_and_hostile_ones_are_hashed():
    assert scope_key("user:42") == "user:42"
    assert scope_key("tenant:acme:project-api") == "tenant:acme:project-api"
    assert scope_key("USER:42") != scope_key("user:42")  # case matters, on every store
    for scope in HOSTILE:
        key = scope_key(scope)
        assert key.startswith("~") and len(key) == 65, scope[:20]
        _validate_namespace(("librarian_recall", key, "memory"))
    assert len({scope_key(s) for s in HOSTILE}) == len(HOSTILE)


def test_scope_key_rejects_non_strings():
    for bad in ["", None, 42, b"bytes"]:
        with pytest.raises(RecallConfigError):
            scope_key(bad)  # type: ignore[arg-type]


@given(st.text(min_size=1, max_size=300), st.text(min_size=1, max_size=300))
def test_distinct_scopes_never_share_a_label(a, b):
    ka, kb = scope_key(a), scope_key(b)
    assert (ka == kb) == (a == b)
    assert len(ka) <= 65 and "." not in ka and "\x00" not in ka
    ka.encode("utf-8")  # always valid UTF-8, whatever the input


def test_byte_bound_range():
    assert check_max_bytes(512) == 512 and check_max_bytes(32_768) == 32_768
    for bad in [511, 32_769, 0, -1, True, 8000.0, "8000"]:
        with pytest.raises(RecallConfigError):
            check_max_bytes(bad)
    assert run_max_bytes(RecallScope(scope_id="s", max_bytes=1000), 8000) == 1000
    assert run_max_bytes(RecallScope(scope_id="s"), 8000) == 8000
    with pytest.raises(RecallConfigError):
        run_max_bytes(RecallScope(scope_id="s", max_bytes=100), 8000)


def test_memory_settings_are_validated():
    with pytest.raises(RecallConfigError):
        ScopeMemory(InMemoryStore(), max_bytes=100)
    with pytest.raises(RecallConfigError):
        ScopeMemory(InMemoryStore(), namespace=("bad.label",))
    with pytest.raises(RecallConfigError):
        ScopeMemory(InMemoryStore(), namespace=("langgraph",))
    with pytest.raises(RecallConfigError):
        ScopeMemory(InMemoryStore(), namespace=())
    with pytest.raises(RecallConfigError):
        ScopeMemory({"not": "a store"})  # type: ignore[arg-type]
    with pytest.raises(RecallConfigError):
        ScopeMemory(InMemoryStore(), max_candidates=0)
