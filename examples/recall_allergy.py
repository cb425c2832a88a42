"""Scoped recall: a nut allergy stated in one thread is remembered in a new one.

Run it offline (a small scripted model stands in for your provider):

    python examples/recall_allergy.py

or with a real model: ``python examples/recall_allergy.py --model openai:gpt-4o-mini``.

What it shows:

1. In thread 1 of scope ``user:42`` the user states a nut allergy; the completed turn is
   copied into scope memory (``capture_turns=True``).
2. In a new thread of ``user:42`` the model's input starts with the recalled evidence.
3. In scope ``user:43`` the same prompt recalls nothing.
4. The new thread's saved checkpoint holds no copy of the recalled text.
5. With the store failing, the turn still answers and the memory tool returns an
   "unavailable" string instead of raising.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore, Op, Result
from langgraph.store.memory import InMemoryStore
from pydantic import PrivateAttr

from langgraph_librarian.recall import (
    RECALL_MESSAGE_ID,
    RecallMiddleware,
    RecallScope,
    ScopeMemory,
    create_memory_tools,
)

DESSERT_QUESTION = "Can you suggest a dessert for tonight? Something with nuts would be great."


class DemoModel(BaseChatModel):
    """A stand-in chat model: reads its input like a careful model would, records it."""

    _inputs: list[list[BaseMessage]] = PrivateAttr(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "demo"

    @property
    def inputs(self) -> list[list[BaseMessage]]:
        return self._inputs

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:  # type: ignore[override]
        return self

    def _answer(self, messages: list[BaseMessage]) -> AIMessage:
        last = messages[-1]
        if isinstance(last, HumanMessage) and "look it up" in str(last.content):
            call = {"name": "memory_search", "args": {"query": "allergy"}, "id": "search-1"}
            return AIMessage("", tool_calls=[call])
        if isinstance(last, ToolMessage):
            return AIMessage(f"The memory tool said: {last.content}")
        if "nut" in str(last.content) and "allerg" in str(last.content).lower():
            return AIMessage("Noted: no nuts, ever.")
        evidence = next((m for m in messages if m.id == RECALL_MESSAGE_ID), None)
        if evidence is not None and "nut allergy" in str(evidence.content):
            return AIMessage("You mentioned a nut allergy, so: a lemon sorbet, no nuts.")
        return AIMessage("How about a walnut brownie?")

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self._inputs.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=self._answer(messages))])


class SwitchableStore(InMemoryStore):
    """An in-memory store you can take down, to watch recall fail open."""

    down = False

    def batch(self, ops: Any) -> list[Result]:
        if self.down:
            raise ConnectionError("memory store unreachable")
        return super().batch(ops)

    async def abatch(self, ops: Any) -> list[Result]:
        if self.down:
            raise ConnectionError("memory store unreachable")
        ops_list: list[Op] = list(ops)
        return await super().abatch(ops_list)


def build_agent(
    model: BaseChatModel | str, memory: ScopeMemory, checkpointer: BaseCheckpointSaver[Any]
) -> Any:
    """An agent with scope recall (capturing completed turns) and the memory tools."""
    return create_agent(
        model,
        tools=create_memory_tools(memory),
        middleware=[RecallMiddleware(memory, capture_turns=True)],
        context_schema=RecallScope,
        checkpointer=checkpointer,
    )


def ask(agent: Any, thread: str, scope: str, text: str) -> str:
    result = agent.invoke(
        {"messages": [HumanMessage(text)]},
        {"configurable": {"thread_id": thread}},
        context=RecallScope(scope_id=scope),
    )
    return str(result["messages"][-1].content)


def checkpoint_mentions(checkpointer: BaseCheckpointSaver[Any], thread: str, text: str) -> bool:
    """Whether any saved checkpoint or pending write of ``thread`` contains ``text``."""
    needle = text.encode("utf-8")
    for saved in checkpointer.list({"configurable": {"thread_id": thread}}):
        _, blob = checkpointer.serde.dumps_typed(saved.checkpoint)
        if needle in blob:
            return True
        for _, _, value in saved.pending_writes or []:
            if needle in checkpointer.serde.dumps_typed(value)[1]:
                return True
    return False


def run(
    model: BaseChatModel | str | None = None,
    store: BaseStore | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
) -> dict[str, Any]:
    """Play the scenario; returns what was observed (the test checks it)."""
    model = model if model is not None else DemoModel()
    store = store if store is not None else SwitchableStore()
    checkpointer = checkpointer if checkpointer is not None else InMemorySaver()
    memory = ScopeMemory(store)
    agent = build_agent(model, memory, checkpointer)

    first = ask(agent, "thread-1", "user:42", "Please note: I have a nut allergy.")
    recalled = ask(agent, "thread-2", "user:42", DESSERT_QUESTION)
    recalled_input = model.inputs[-1] if isinstance(model, DemoModel) else []
    other_scope = ask(agent, "thread-3", "user:43", DESSERT_QUESTION)
    other_input = model.inputs[-1] if isinstance(model, DemoModel) else []
    observed: dict[str, Any] = {
        "first": first,
        "recalled_answer": recalled,
        "recalled_input": recalled_input,
        "other_scope_answer": other_scope,
        "other_scope_input": other_input,
        # The recalled block and the thread-1 sentence it quotes must not be saved here.
        "checkpoint_has_recall": any(
            checkpoint_mentions(checkpointer, "thread-2", text)
            for text in ("I have a nut allergy", "UNTRUSTED historical evidence")
        ),
    }
    if isinstance(store, SwitchableStore):
        store.down = True
        observed["failing_answer"] = ask(agent, "thread-4", "user:42", DESSERT_QUESTION)
        observed["failing_tool"] = ask(agent, "thread-5", "user:42", "Please look it up.")
        store.down = False
    return observed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", help='a "provider:model" string (default: offline demo)')
    args = parser.parse_args()
    seen = run(model=args.model)
    print("thread-1 (user:42):", seen["first"])
    print("thread-2 (user:42):", seen["recalled_answer"])
    if seen["recalled_input"]:
        print("  model input starts with:", str(seen["recalled_input"][0].content)[:90], "...")
    print("thread-3 (user:43):", seen["other_scope_answer"])
    print("recalled text in thread-2's checkpoint:", seen["checkpoint_has_recall"])
    if "failing_answer" in seen:
        print("store down, answer:", seen["failing_answer"])
        print("store down, tool:", seen["failing_tool"])


if __name__ == "__main__":
    main()
