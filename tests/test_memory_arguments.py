"""Wrong-typed memory settings fail when given, with an error naming the parameter
(newbie trial 3: ``max_messages="6"`` failed later with a bare "'<' not supported")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableLambda

from langgraph_librarian.memory import (
    RunningSummarizer,
    create_delete_messages_node,
    create_summarize_node,
    create_summary_graph,
    create_summary_router,
    plan_summary_cut,
    summarize_messages,
    trim_history,
)

ECHO = RunnableLambda(lambda messages: AIMessage("ok"))
HISTORY = [HumanMessage("hi"), AIMessage("hello")]

WRONG_TYPES: list[tuple[str, Callable[[], Any]]] = [
    ("max_summary_tokens", lambda: RunningSummarizer(max_summary_tokens="x")),
    ("max_summary_tokens", lambda: RunningSummarizer(max_summary_tokens=200.0)),
    ("max_summary_tokens", lambda: summarize_messages(HISTORY, max_summary_tokens="200")),
    ("timeout", lambda: RunningSummarizer(timeout="20")),
    ("max_retries", lambda: RunningSummarizer(max_retries=True)),
    ("retry_backoff", lambda: RunningSummarizer(retry_backoff="0.5")),
    ("prompt", lambda: RunningSummarizer(prompt=5)),
    ("max_tokens", lambda: trim_history(HISTORY, max_tokens="10")),
    ("max_messages", lambda: create_summary_graph(ECHO, max_messages="6")),
    ("max_tokens", lambda: create_summary_graph(ECHO, max_tokens="600")),
    ("keep_last", lambda: create_summary_graph(ECHO, keep_last="2")),
    ("max_messages", lambda: create_summary_router(max_messages=6.5)),
    ("keep_last", lambda: create_summarize_node(keep_last=None)),
    ("keep_last", lambda: create_delete_messages_node(keep_last="3")),
    ("keep_last", lambda: plan_summary_cut(HISTORY, keep_last="2")),
]


@pytest.mark.parametrize(("name", "build"), WRONG_TYPES)
def test_a_wrong_type_raises_a_type_error_naming_the_parameter(name, build):
    with pytest.raises(TypeError, match=rf"^{name} must be "):
        build()


@pytest.mark.parametrize(
    ("name", "build"),
    [
        ("max_summary_tokens", lambda: RunningSummarizer(max_summary_tokens=5)),
        ("timeout", lambda: RunningSummarizer(timeout=0)),
        ("max_retries", lambda: RunningSummarizer(max_retries=-1)),
        ("max_tokens", lambda: trim_history(HISTORY, max_tokens=-1)),
        ("max_messages", lambda: create_summary_graph(ECHO, max_messages=-1)),
        ("keep_last", lambda: create_summary_graph(ECHO, keep_last=-1)),
    ],
)
def test_a_number_out_of_range_raises_a_value_error_naming_the_parameter(name, build):
    with pytest.raises(ValueError, match=rf"^{name} must be >"):
        build()


def test_right_types_still_work_including_int_like_numbers():
    import numpy as np

    summarizer = RunningSummarizer(max_summary_tokens=np.int64(40), timeout=5, retry_backoff=0)
    assert summarizer.max_summary_tokens == 40 and type(summarizer.max_summary_tokens) is int
    assert summarizer.timeout == 5.0
    assert RunningSummarizer(timeout=None).timeout is None
    assert [m.type for m in trim_history(HISTORY, max_tokens=np.int32(100))] == ["human", "ai"]
