"""Scoped recall for hand-built graphs: a ``pre_model_hook``-style node and a capture node."""

from __future__ import annotations

from typing import Any, cast

from langchain_core.messages import AnyMessage, BaseMessage
from langchain_core.runnables import RunnableConfig

from langgraph_librarian._kit.node import LibrarianNode
from langgraph_librarian._kit.run import current_runtime, run_context, thread_id
from langgraph_librarian._kit.state import read_messages
from langgraph_librarian.recall._memory import ScopeMemory, check_memory
from langgraph_librarian.recall._middleware import recall_report
from langgraph_librarian.recall._result import RecallResult
from langgraph_librarian.recall._turn import (
    acapture_turn,
    arecall_for_turn,
    capture_turn,
    recall_for_turn,
)

__all__ = ["create_capture_node", "create_recall_hook"]

Update = dict[str, Any]


def create_recall_hook(memory: ScopeMemory, *, report: bool = False) -> LibrarianNode:
    """A ``pre_model_hook`` node that writes ``llm_input_messages`` on every path.

    With ``report=True`` it also writes the turn's recall to ``librarian_recall``
    (:func:`~langgraph_librarian.recall.recall_report`); give your state that key
    (``librarian_recall: dict``).

    On a recall the channel holds the recalled ``SystemMessage`` followed by the
    original messages in order; on an empty result or any failure it holds the
    original messages. It is never left unwritten: ``llm_input_messages`` is a
    checkpointed last-value channel, so skipping the write would hand the model the
    previous call's input. Your model node must read
    ``state.get("llm_input_messages") or state["messages"]``; ``messages`` itself is
    never touched, so the checkpoint holds no recalled text beyond this channel's
    latest value (overwritten every model step).

    Example:
        ```python
        builder.add_node("recall", create_recall_hook(memory))
        builder.add_edge("recall", "model")
        graph = builder.compile(checkpointer=checkpointer)
        graph.invoke(state, config, context=RecallScope(scope_id="user:42"))
        ```
    """
    check_memory(memory, "create_recall_hook")

    def update(messages: list[BaseMessage], result: RecallResult) -> Update:
        out: Update = {"llm_input_messages": cast(list[AnyMessage], result.apply(messages))}
        if report:
            out["librarian_recall"] = recall_report(result)
        return out

    def recall(state: dict[str, Any], config: RunnableConfig | None = None) -> Update:
        messages = read_messages(state)
        result = recall_for_turn(memory, run_context(current_runtime()), messages, config)
        return update(messages, result)

    async def arecall(state: dict[str, Any], config: RunnableConfig | None = None) -> Update:
        messages = read_messages(state)
        context = run_context(current_runtime())
        result = await arecall_for_turn(memory, context, messages, config)
        return update(messages, result)

    return LibrarianNode(recall, afunc=arecall, name="scope_recall")


def create_capture_node(memory: ScopeMemory) -> LibrarianNode:
    """A node to run after the agent: copies the completed turn into scope memory.

    It changes no state. Failures are logged, never raised: the turn already has its
    answer. An ``index`` in state (the Librarian's) is reused for the summaries.

    Example:
        ```python
        builder.add_node("capture", create_capture_node(memory))
        builder.add_edge("model", "capture")
        ```
    """
    check_memory(memory, "create_capture_node")

    def capture(state: dict[str, Any], config: RunnableConfig | None = None) -> Update:
        context = run_context(current_runtime())
        capture_turn(memory, context, state, thread_id(config))
        return {}

    async def acapture(state: dict[str, Any], config: RunnableConfig | None = None) -> Update:
        context = run_context(current_runtime())
        await acapture_turn(memory, context, state, thread_id(config))
        return {}

    return LibrarianNode(capture, afunc=acapture, name="scope_capture")
