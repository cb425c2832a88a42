"""request_tools in an agent with a context_schema: no pydantic warning per call.

A bare ``ToolRuntime`` annotation made pydantic serialize the dataclass context as the
unbound TypeVar and warn twice per call (``PydanticSerializationUnexpectedValue``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from fakes import ToolCallingScriptedModel
from langgraph_librarian.tools import ToolIndex, ToolLibrarianMiddleware
from test_tools import email_read, email_send, github_create_issue


@dataclass
class Tenant:
    tenant_id: str


def _decide(messages: list[Any]) -> AIMessage:
    if isinstance(messages[-1], HumanMessage):
        call = {"name": "request_tools", "args": {"query": "send an email"}, "id": "c1"}
        return AIMessage("", tool_calls=[call])
    return AIMessage("done")


def _agent() -> Any:
    index = ToolIndex([email_send, email_read, github_create_issue], embeddings=None)
    return create_agent(
        ToolCallingScriptedModel(script=_decide),
        middleware=[ToolLibrarianMiddleware(index)],
        context_schema=Tenant,
        checkpointer=InMemorySaver(),
    )


def test_request_tools_with_a_context_schema_warns_nothing() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = _agent().invoke(
            {"messages": [HumanMessage("hi")]},
            {"configurable": {"thread_id": "w"}},
            context=Tenant("t1"),
        )
    assert result["messages"][-1].content == "done"


async def test_arequest_tools_with_a_context_schema_warns_nothing() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = await _agent().ainvoke(
            {"messages": [HumanMessage("hi")]},
            {"configurable": {"thread_id": "w"}},
            context=Tenant("t1"),
        )
    assert result["messages"][-1].content == "done"
