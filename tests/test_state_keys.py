"""An app state with a field of its own named like one of the Librarian's state keys."""

from __future__ import annotations

from typing import NotRequired

import pytest
from langchain.agents import AgentState, create_agent
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from fakes import ScriptedChatModel
from langgraph_librarian import LibrarianMiddleware


class PagedState(AgentState):
    index: NotRequired[int]  # the app's own page counter


def test_an_index_field_of_the_app_gets_an_error_naming_the_clash():
    agent = create_agent(
        ScriptedChatModel(script="ok"),
        state_schema=PagedState,
        middleware=[LibrarianMiddleware()],
        checkpointer=InMemorySaver(),
    )
    with pytest.raises(ValueError, match="reserves the state keys 'index'") as raised:
        agent.invoke(
            {"messages": [HumanMessage("hello")], "index": 3},
            {"configurable": {"thread_id": "paged"}},
        )
    assert "got int" in str(raised.value) and "rename yours" in str(raised.value)
