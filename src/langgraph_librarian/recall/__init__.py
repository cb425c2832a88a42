"""Scoped recall: a tenant's or project's long-term memory across threads.

The Librarian remembers inside one thread. Scoped recall remembers across the threads
of one *scope* (a user, a tenant, a project), kept in a LangGraph ``BaseStore``
(in-memory, SQLite, PostgreSQL). Before a model call, the latest human message selects
bounded evidence from the scope's memory with the Librarian's selector; the model gets
it as one ``SystemMessage`` marked as untrusted historical evidence, and nothing of it
is written to ``messages`` or the checkpoint. Everything fails open.

- :class:`RecallScope`: the run context naming the scope (``context_schema``).
- :class:`ScopeMemory`: the memory (remember, capture, search, recall, delete_scope).
- :class:`RecallMiddleware`: the ``create_agent`` delivery (``wrap_model_call``).
- :func:`create_recall_hook` / :func:`create_capture_node`: for hand-built graphs.
- :func:`create_memory_tools`: ``memory_search``, ``memory_remember``, ``memory_context``.

Example:
    ```python
    from langgraph.store.memory import InMemoryStore
    from langgraph_librarian.recall import RecallScope, ScopeMemory

    memory = ScopeMemory(InMemoryStore())
    memory.remember("user:42", "Allergic to peanuts and tree nuts.")
    result = memory.recall("user:42", "Can you suggest a dessert?")
    ```
"""

from langgraph_librarian.recall._hook import create_capture_node, create_recall_hook
from langgraph_librarian.recall._memory import ScopeMemory
from langgraph_librarian.recall._middleware import RecallMiddleware
from langgraph_librarian.recall._result import RECALL_MESSAGE_ID, RecallResult
from langgraph_librarian.recall._scope import (
    MissingScopeError,
    RecallScope,
    resolve_scope,
    scope_key,
)
from langgraph_librarian.recall._tools import create_memory_tools

__all__ = [
    "RECALL_MESSAGE_ID",
    "MissingScopeError",
    "RecallMiddleware",
    "RecallResult",
    "RecallScope",
    "ScopeMemory",
    "create_capture_node",
    "create_memory_tools",
    "create_recall_hook",
    "resolve_scope",
    "scope_key",
]
