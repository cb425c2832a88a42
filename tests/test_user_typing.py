"""The documented recipes type-check as users write them (the package ships py.typed)."""

from __future__ import annotations

from pathlib import Path

from mypy import api

SNIPPET = """
from langchain.agents import create_agent
from langchain.agents.middleware import PIIMiddleware, SummarizationMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from langgraph.graph import StateGraph

from langgraph_librarian import (
    FileIndexStore,
    LibrarianConfig,
    LibrarianMiddleware,
    LibrarianState,
    create_index_node,
    create_librarian_node,
    index_messages,
)
from langgraph_librarian.memory import (
    RunningSummaryMiddleware,
    create_delete_messages_node,
    create_summarize_node,
)
from langgraph_librarian.middleware import create_librarian_hook
from langgraph_librarian.recall import (
    RecallMiddleware,
    RecallScope,
    ScopeMemory,
    create_capture_node,
    create_recall_hook,
)
from langgraph_librarian.tools import ToolLibrarianMiddleware


def configs(sqlite: SqliteStore) -> list[LibrarianConfig]:
    # a LangGraph BaseStore is a valid store: the config wraps it
    return [
        LibrarianConfig(store=InMemoryStore()),
        LibrarianConfig(store=sqlite),
        LibrarianConfig(store=FileIndexStore("/tmp/librarian-index")),
        LibrarianConfig(store=None),
    ]


middleware = LibrarianMiddleware(LibrarianConfig(store=InMemoryStore()))


def agents(model: BaseChatModel, tools: list[BaseTool]) -> None:
    # the README recipe: middleware of different state schemas in one list
    memory = ScopeMemory(InMemoryStore())
    create_agent(
        model,
        middleware=[
            LibrarianMiddleware(LibrarianConfig(store=InMemoryStore())),
            RecallMiddleware(memory, capture_turns=True, report=True),
        ],
        context_schema=RecallScope,
    )
    # ours beside LangChain's own
    create_agent(
        model,
        tools=tools,
        middleware=[
            RunningSummaryMiddleware(model, trigger=("messages", 6), keep=("messages", 2)),
            LibrarianMiddleware(),
            ToolLibrarianMiddleware(tools),
            PIIMiddleware("email"),
            SummarizationMiddleware(model),
        ],
    )


def graph() -> None:
    # every node the docs add to a StateGraph
    builder = StateGraph(LibrarianState)
    config = LibrarianConfig()
    builder.add_node("librarian", create_librarian_node(config))
    builder.add_node("indexer", index_messages)
    builder.add_node("indexer2", create_index_node(config))
    builder.add_node("hook", create_librarian_hook(config))
    builder.add_node("summarize", create_summarize_node(keep_last=2))
    builder.add_node("delete", create_delete_messages_node(keep_last=2))
    memory = ScopeMemory(InMemoryStore())
    builder.add_node("recall", create_recall_hook(memory))
    builder.add_node("capture", create_capture_node(memory))
"""


def test_documented_configs_and_nodes_type_check(tmp_path: Path) -> None:
    path = tmp_path / "user_code.py"
    path.write_text(SNIPPET)
    out, err, status = api.run(
        [str(path), "--strict", "--cache-dir", str(tmp_path / ".mypy_cache"), "--no-error-summary"]
    )
    assert status == 0, out + err
