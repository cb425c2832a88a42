"""Bugs found by a hunt through the running-summary and trimming strategies: each test
is an input a production user can send, and what must (not) happen with it."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, SystemMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import MessagesState
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from fakes import ScriptedChatModel, ToolCallingScriptedModel
from langgraph_librarian.memory import (
    RunningSummarizer,
    RunningSummaryMiddleware,
    SummaryFields,
    build_model_input,
    create_summary_graph,
    history_problems,
)


@tool
def pantry(item: str) -> str:
    """Say how much of an item is in the pantry."""
    return f"{item}: 3 units"


def cfg(thread: str = "t") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def tool_loop_model(calls_per_turn: int = 3) -> ToolCallingScriptedModel:
    """Calls ``pantry`` ``calls_per_turn`` times after each question, then answers."""
    made = {"n": 0, "turn": 0}

    def decide(messages: list[Any]) -> AIMessage:
        if messages[-1].type == "human":
            made["turn"] = 0
        if made["turn"] < calls_per_turn:
            made["turn"] += 1
            made["n"] += 1
            call = {"name": "pantry", "args": {"item": f"x{made['n']}"}, "id": f"c{made['n']}"}
            return AIMessage("", tool_calls=[{**call, "type": "tool_call"}])
        return AIMessage("Done.")

    return ToolCallingScriptedModel(script=decide)


# -- RunningSummaryMiddleware: a cut that leaves nothing to fold ------------------------------


@pytest.mark.parametrize("run_async", [False, True], ids=["sync", "async"])
async def test_middleware_never_folds_nothing(run_async):
    """When the cut would fold only the turn's question (kept) or only the previous
    summary, LangChain wrote "No previous conversation history." as the summary, or
    re-summarized the summary alone with a model call before every model call."""
    model = tool_loop_model()
    summary_model = ScriptedChatModel(script="- User is allergic to nuts.")
    middleware = RunningSummaryMiddleware(
        model,
        summarizer=RunningSummarizer(summary_model, max_retries=0),
        trigger=("messages", 4),
        keep=("messages", 3),
    )
    agent = create_agent(
        model, tools=[pantry], middleware=[middleware], checkpointer=InMemorySaver()
    )
    for text in ["I'm allergic to nuts, what can I cook?", "And for dessert?", "Snacks?"]:
        payload = {"messages": [HumanMessage(text)]}
        state = await agent.ainvoke(payload, cfg()) if run_async else agent.invoke(payload, cfg())
    summary = state["messages"][0]
    assert summary.additional_kwargs.get("lc_source") == "summarization"
    assert "No previous conversation history" not in summary.content
    for prompt in summary_model.calls:  # every summary call folds at least one message
        assert "<messages>\n\n</messages>" not in str(prompt[-1].content)
    for call in model.calls:
        assert history_problems(call) == []


# -- create_summary_graph: a Runnable that answers with a string ---------------------------


@pytest.mark.parametrize("run_async", [False, True], ids=["sync", "async"])
async def test_a_string_answer_is_the_assistant_s(run_async):
    """A chain ending in ``StrOutputParser`` answers with a ``str``; ``add_messages``
    turned it into a human message, so the model later read its own answers as the
    user's, and the summary said "User: ..." for them."""
    graph = create_summary_graph(
        RunnableLambda(lambda messages: "Try a lentil curry."),
        max_messages=2,
        keep_last=2,
        checkpointer=InMemorySaver(),
    )
    payload = {"messages": [("user", "I'm allergic to nuts.")]}
    for _ in range(2):
        state = await graph.ainvoke(payload, cfg()) if run_async else graph.invoke(payload, cfg())
    assert [m.type for m in state["messages"]] == ["human", "ai"]
    assert state["summary"].splitlines() == [
        "- User: I'm allergic to nuts.",
        "- Assistant: Try a lentil curry.",
    ]


# -- RunningSummaryMiddleware: a LangChain-style summarizer that returns nothing -------------


def blank(messages: list[Any]) -> str:
    return "  "


@pytest.mark.parametrize("run_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("writer", ["callable", "summary_prompt"])
async def test_a_blank_summary_fails_open(run_async, writer):
    """A callable ``summarizer`` (or a ``summary_prompt`` model) answering "" replaced
    the previous summary and the folded messages by an empty summary: all lost."""
    model = ToolCallingScriptedModel(script="Answer.")
    if writer == "callable":
        extra: dict[str, Any] = {"summarizer": RunnableLambda(blank)}
    else:
        extra = {"summarizer": ScriptedChatModel(script=""), "summary_prompt": "{messages}"}
    agent = create_agent(
        model,
        middleware=[
            RunningSummaryMiddleware(model, trigger=("messages", 4), keep=("messages", 2), **extra)
        ],
        checkpointer=InMemorySaver(),
    )
    texts = ["I'm allergic to nuts.", "Lunch?", "Dinner?"]
    for text in texts:
        payload = {"messages": [HumanMessage(text)]}
        state = await agent.ainvoke(payload, cfg()) if run_async else agent.invoke(payload, cfg())
    assert [m.content for m in state["messages"] if m.type == "human"] == texts
    assert "empty summary" in state["summary_metadata"]["summary_error"]


# -- RunningSummarizer: the shortened answer is held to what the first one was -------------

FOLD = [
    HumanMessage("I'm allergic to peanuts."),
    AIMessage("Noted."),
    HumanMessage("I love Thai curry and we are 4 people at home."),
    AIMessage("Great, curry for 4."),
]
OVER_BUDGET = (
    "- User is allergic to peanuts; the assistant noted the peanut allergy.\n"
    "- User loves Thai curry, especially Thai curry cooked at home.\n"
    "- The household is 4 people at home, so curry is for 4 people.\n"
    "- The assistant answered: great, curry for 4 people at home."
)


@pytest.mark.parametrize("run_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize(
    "shortened",
    ["- User loves peanuts and Thai curry.", "- User loves Thai curry; household of 4 people."],
    ids=["said-the-other-way", "allergy-left-out"],
)
async def test_a_shortened_summary_must_stay_true_to_the_conversation(run_async, shortened):
    """An answer over budget is sent back to be shortened; the shortened answer was only
    checked against the long one, so "User loves peanuts" (or a summary without the
    allergy) became the summary: the checks the docs promise for a model's answer."""
    model = ScriptedChatModel(script=[OVER_BUDGET, shortened])
    summarizer = RunningSummarizer(model, max_summary_tokens=30, max_retries=0)
    result = await summarizer.asummarize(FOLD) if run_async else summarizer.summarize(FOLD)
    assert len(model.calls) == 2  # the re-compression call was made
    assert "allergic to peanuts" in result.summary
    assert "loves peanuts" not in result.summary
    assert result.summary_tokens <= 30
    assert any(note.startswith("re-compression rejected") for note in result.notes)


# -- the failure cool-down after the history was cleared ------------------------------------


def test_a_cleared_history_ends_the_failure_cool_down():
    """The cool-down waited for an absolute message count: after a failure at 36
    messages the next try was due at 68, and once the thread was cleared
    (REMOVE_ALL_MESSAGES) no summary was tried for the next 60-odd messages, however
    many piled up, although the provider was back."""
    down = [RuntimeError("down")] * 4
    summary_model = ScriptedChatModel(script=[*down, "- User is allergic to fish."])
    graph = create_summary_graph(
        ScriptedChatModel(script="Answer."),
        summarizer=RunningSummarizer(summary_model, max_retries=0),
        max_messages=6,
        keep_last=2,
        checkpointer=InMemorySaver(),
    )
    for i in range(18):
        state = graph.invoke({"messages": [("user", f"Question {i}?")]}, cfg())
    assert state["summary_metadata"]["summary_failures"] == 4
    clear = [RemoveMessage(id=REMOVE_ALL_MESSAGES), HumanMessage("New topic: fish.")]
    graph.invoke({"messages": clear}, cfg())
    for i in range(3):
        state = graph.invoke({"messages": [("user", f"I'm allergic to fish {i}.")]}, cfg())
    assert len(summary_model.calls) == 5
    assert "summary_error" not in state["summary_metadata"]
    assert len(state["messages"]) <= 6


# -- RunningSummarizer: messages given as a generator --------------------------------------


@pytest.mark.parametrize("run_async", [False, True], ids=["sync", "async"])
async def test_messages_from_a_generator_are_summarized(run_async):
    """``summarize(m for m in history if ...)`` summarized nothing: the type check
    consumed the generator and the empty rest became an empty summary. (The other
    helpers, ``trim_history``, ``repair_history``..., take any iterable.)"""
    history = [HumanMessage("I'm allergic to nuts."), AIMessage("Noted.")]
    summarizer = RunningSummarizer()
    messages = (m for m in history if m.type != "system")
    result = await summarizer.asummarize(messages) if run_async else summarizer.summarize(messages)
    assert result.summary == "- User: I'm allergic to nuts.\n- Assistant: Noted."
    assert result.summarized_count == 2


# -- RunningSummarizer: an answer stopped at the output-token limit --------------------------

HOUSEHOLD = [
    HumanMessage("I'm allergic to nuts."),
    AIMessage("Noted."),
    HumanMessage("We are 4 at home. Any lunch idea?"),
    AIMessage("A lentil soup."),
]
CUT = "- User is allergic to nuts.\n- Household of 4 people.\n- User asked for a lunch idea and"


@pytest.mark.parametrize("run_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize(
    "metadata",
    [{"finish_reason": "length"}, {"stop_reason": "max_tokens"}],
    ids=["openai", "anthropic"],
)
async def test_a_reported_output_limit_drops_the_cut_last_line(run_async, metadata):
    """The provider says the answer stopped at its output limit; the running summary
    kept the cut last line as it was (the index rejects such answers; here only an
    unreported cut mid-word was handled)."""
    model = ScriptedChatModel(script=AIMessage(CUT, response_metadata=metadata))
    summarizer = RunningSummarizer(model, max_retries=0)
    result = (
        await summarizer.asummarize(HOUSEHOLD) if run_async else summarizer.summarize(HOUSEHOLD)
    )
    assert result.method == "llm"
    assert result.summary == "- User is allergic to nuts.\n- Household of 4 people."


def test_a_one_line_answer_stopped_at_the_output_limit_is_not_kept():
    cut = AIMessage("- User is allergic to nuts and", response_metadata={"finish_reason": "length"})
    result = RunningSummarizer(ScriptedChatModel(script=cut), max_retries=0).summarize(HOUSEHOLD)
    assert result.method == "extractive"
    assert "output-token limit" in result.notes[-1]


# -- build_model_input: the repair warning says what was repaired ----------------------------


def test_the_repair_warning_names_what_was_repaired(caplog):
    """A system message in the middle was moved to the front, and the warning said
    "dropped or changed tool calls without results" plus the greeting hint: the user
    went looking for tool calls that were never there."""
    call = {"name": "pantry", "args": {}, "id": "c1", "type": "tool_call"}
    with caplog.at_level("WARNING", logger="langgraph_librarian.memory._graph"):
        build_model_input(
            [HumanMessage("hi"), AIMessage("yo"), SystemMessage("Be terse."), HumanMessage("q")]
        )
        unanswered_call = AIMessage("x", tool_calls=[call])
        build_model_input([HumanMessage("hi"), unanswered_call, HumanMessage("q")])
    moved, unanswered = (record.getMessage() for record in caplog.records)
    assert "2:system" in moved and "tool calls" not in moved
    assert "require_human_first" not in moved + unanswered  # no greeting was dropped
    assert "1:ai" in unanswered


# -- create_summary_graph: a state schema without the summary fields -------------------------


def test_a_state_schema_without_the_summary_fields_is_refused():
    """``state_schema=MessagesState`` (no ``summary``): the node deleted the old
    messages and LangGraph dropped the summary update, so everything folded was lost
    without a word; without ``summary_metadata`` the failure cool-down never held."""

    class NoSummary(MessagesState):
        pass

    class NoMetadata(MessagesState):
        summary: str

    class Complete(MessagesState, SummaryFields):
        pass

    for schema in (NoSummary, NoMetadata):
        with pytest.raises(ValueError, match="SummaryFields"):
            create_summary_graph(ScriptedChatModel(script="ok"), state_schema=schema)
    create_summary_graph(ScriptedChatModel(script="ok"), state_schema=Complete)


def test_a_prose_answer_stopped_at_the_output_limit_loses_its_last_sentence():
    prose = "User is allergic to nuts. The household is 4 people. User asked for a lunch"
    cut = AIMessage(prose, response_metadata={"finish_reason": "length"})
    result = RunningSummarizer(ScriptedChatModel(script=cut), max_retries=0).summarize(HOUSEHOLD)
    assert result.method == "llm"
    assert result.summary == "User is allergic to nuts. The household is 4 people."
