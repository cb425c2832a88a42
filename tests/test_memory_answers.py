"""What a summary model answers is checked before it replaces anything.

A model that echoes its prompt, refuses, answers "OK", talks about something else or
drops the previous summary must never become the running summary; its reasoning
(thinking blocks, ``<think>`` tags) must never leak into it.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, RemoveMessage

from fakes import ScriptedChatModel, prompt_text
from langgraph_librarian._engine.messages import output_text
from langgraph_librarian.memory import RunningSummarizer, create_summarize_node
from langgraph_librarian.memory._prompts import DEFAULT_RUNNING_SUMMARY_PROMPT

PREVIOUS = "- User: vegetarian, allergic to nuts"
BATCH = [
    HumanMessage("I love Thai green curry.", id="1"),
    AIMessage("Great choice, I'll keep it nut-free.", id="2"),
    HumanMessage("hi", id="3"),
    AIMessage("hey", id="4"),
]


def echo_data(messages: list[BaseMessage]) -> str:
    return str(messages[-1].content)  # returns the fenced data it was given


def echo_instructions(messages: list[BaseMessage]) -> str:
    return str(messages[0].content)


GARBAGE = {
    "ok": "OK",
    "echo-data": echo_data,
    "echo-instructions": echo_instructions,
    "refusal": "I'm sorry, but I can't help with summarizing this conversation.",
    "unrelated": "- Paris is the capital of France.\n- The Louvre holds the Mona Lisa painting.",
    "drops-previous": "- The user likes Thai green curry and said hi.",
    "empty": "",
}


@pytest.mark.parametrize("answer", GARBAGE.values(), ids=GARBAGE.keys())
def test_a_rejected_answer_never_becomes_the_summary(answer):
    model = ScriptedChatModel(script=answer)
    result = RunningSummarizer(model, max_retries=0).summarize(BATCH, PREVIOUS)
    assert result.method == "extractive"  # the offline merge took over
    assert "allergic to nuts" in result.summary and "Thai green curry" in result.summary
    assert "<messages>" not in result.summary and result.summary != "OK"
    assert any("rejected" in note for note in result.notes), result.notes


def test_the_node_saves_the_offline_merge_not_the_garbage_and_says_so():
    node = create_summarize_node(RunningSummarizer(ScriptedChatModel(script="OK")), keep_last=2)
    update = node({"messages": BATCH, "summary": PREVIOUS})
    assert update["summary"] != "OK" and "allergic to nuts" in update["summary"]
    assert [m.id for m in update["messages"]] == ["1", "2"]
    assert all(isinstance(m, RemoveMessage) for m in update["messages"])
    metadata = update["summary_metadata"]
    assert metadata["summary_method"] == "extractive"
    assert any("rejected" in note for note in metadata["summary_notes"])


async def test_async_rejects_the_same_answers():
    model = ScriptedChatModel(script=echo_data)
    result = await RunningSummarizer(model, max_retries=0).asummarize(BATCH, PREVIOUS)
    assert result.method == "extractive" and "<previous_summary>" not in result.summary
    assert model.async_calls == 1


@pytest.mark.parametrize(
    "answer",
    [
        "- User is vegetarian and allergic to nuts; loves Thai green curry.",
        "The user is vegetarian, allergic to nuts, and loves Thai green curry.",
    ],
)
def test_a_real_summary_is_accepted(answer):
    result = RunningSummarizer(ScriptedChatModel(script=answer)).summarize(BATCH, PREVIOUS)
    assert result.method == "llm" and result.summary == answer and not result.notes


@pytest.mark.parametrize("answer", ["OK", "Done.", "- ..."])
def test_an_answer_that_says_nothing_is_rejected_even_without_a_previous_summary(answer):
    result = RunningSummarizer(ScriptedChatModel(script=answer)).summarize(BATCH[:2])
    assert result.method == "extractive" and "Thai green curry" in result.summary
    assert any("rejected" in note for note in result.notes)


def test_first_summary_without_a_previous_one_is_accepted():
    model = ScriptedChatModel(script="- Sam loves Thai green curry.")
    result = RunningSummarizer(model).summarize(BATCH[:2])
    assert result.method == "llm" and result.summary == "- Sam loves Thai green curry."


def test_a_garbage_recompression_falls_back_to_compressing_the_first_answer():
    first = "\n".join(
        [
            "- User is vegetarian and allergic to nuts.",
            "- User loves Thai green curry, nut-free.",
            "- Assistant said: great choice, I'll keep it nut-free.",
            "- User said hi; the assistant said hey.",
            "- Green curry must stay nut-free for the user.",
        ]
    )
    model = ScriptedChatModel(script=[first, echo_data])
    result = RunningSummarizer(model, max_summary_tokens=40, max_retries=0).summarize(
        BATCH, PREVIOUS
    )
    assert result.method == "llm" and result.summary_tokens <= 40
    assert "<summary>" not in result.summary and "Shorten" not in result.summary
    assert "offline re-compression" in result.notes
    assert any("rejected" in note for note in result.notes)


# -- reasoning never leaks ----


THINKING = AIMessage(
    [
        {"type": "thinking", "thinking": "The user mentioned walnuts earlier, hmm."},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Plan"}]},
        {"type": "text", "text": "- User is vegetarian and allergic to nuts; likes curry."},
    ]
)


def test_output_text_keeps_only_the_text_of_a_model_answer():
    assert output_text(THINKING) == "- User is vegetarian and allergic to nuts; likes curry."
    tagged = AIMessage("<think>walnuts? maybe</think>\n- User likes curry.")
    assert output_text(tagged).strip() == "- User likes curry."
    call = {"name": "lookup", "args": {"q": "x"}, "id": "c1", "type": "tool_call"}
    assert output_text(AIMessage("Answer.", tool_calls=[call])) == "Answer."
    assert output_text("plain") == "plain"
    blocks = AIMessage([{"type": "text", "text": "in message 6"}, "IDs: [6]"])
    assert output_text(blocks) == "in message 6\nIDs: [6]"  # not "message 6IDs: [6]"


@pytest.mark.parametrize(
    "answer",
    [
        THINKING,
        AIMessage("<think>walnuts</think>" + PREVIOUS),
        # The chat template opened <think> in the prompt (DeepSeek-R1 served by some
        # OpenAI-compatible servers): the answer holds only its closing tag.
        AIMessage("Okay, so the user mentioned walnuts, hmm.\n</think>\n\n" + PREVIOUS),
        AIMessage("<reasoning>The user mentioned walnuts.</reasoning>\n" + PREVIOUS),
    ],
    ids=["blocks", "think", "closing_think_only", "reasoning_tags"],
)
def test_reasoning_never_reaches_the_summary(answer: Any):
    result = RunningSummarizer(ScriptedChatModel(script=answer)).summarize(BATCH, PREVIOUS)
    assert result.method == "llm"
    assert "walnuts" not in result.summary and "[thinking]" not in result.summary


# -- the previous summary reaches the model whole when it fits its budget ----


def test_a_previous_summary_within_a_large_budget_is_not_clipped():
    previous = "\n".join(f"- fact {i}: user detail number {i} worth keeping" for i in range(300))
    summarizer = RunningSummarizer(ScriptedChatModel(script=previous), max_summary_tokens=4000)
    prompt = prompt_text(summarizer.build_prompt([HumanMessage("one more thing")], previous))
    assert "fact 150:" in prompt and "fact 299:" in prompt and "omitted" not in prompt


def test_a_previous_summary_over_budget_reaches_the_model_compressed_not_cut():
    previous = "\n".join(f"- User: fact {i} about menu day {i}." for i in range(3000))
    previous += "\n- User: I'm allergic to nuts, remember that."
    summarizer = RunningSummarizer(ScriptedChatModel(script="x"), max_summary_tokens=500)
    prompt = prompt_text(summarizer.build_prompt([HumanMessage("hi")], previous))
    data = prompt.split("<previous_summary>")[1].split("</previous_summary>")[0]
    assert "allergic to nuts" in data and "omitted" not in data
    assert len(data) <= 500 * 4 + 200


def test_default_prompt_is_unchanged_public_text():
    assert "{max_words}" in DEFAULT_RUNNING_SUMMARY_PROMPT


def test_output_text_keeps_a_sentence_split_into_cited_blocks_whole():
    """Anthropic's citations split one sentence into several text blocks."""
    from langchain_core.messages import AIMessage

    from langgraph_librarian._engine.messages import output_text

    cited = AIMessage(
        content=[
            {"type": "text", "text": "Dana set the catering budget at "},
            {"type": "text", "text": "$5,000", "citations": [{"cited_text": "5,000"}]},
            {"type": "text", "text": " for the Berlin launch."},
        ]
    )
    assert output_text(cited) == "Dana set the catering budget at $5,000 for the Berlin launch."
    separate = AIMessage(
        content=[
            {"type": "text", "text": "It is in message 6"},
            {"type": "text", "text": "IDs: [6]"},
        ]
    )
    assert output_text(separate) == "It is in message 6\nIDs: [6]"


def test_output_text_follows_anthropics_citation_layout():
    from langchain_core.messages import AIMessage

    from langgraph_librarian._engine.messages import output_text

    def cite(text: str) -> dict:
        return {"type": "text", "text": text, "citations": [{"cited_text": text}]}

    layout = AIMessage(
        content=[
            {"type": "text", "text": "According to the document, "},
            cite("the grass is green"),
            {"type": "text", "text": " and "},
            cite("the sky is blue"),
            {"type": "text", "text": ". Information from page 5 states that "},
            cite("water is essential"),
            {"type": "text", "text": "."},
        ]
    )
    assert output_text(layout) == (
        "According to the document, the grass is green and the sky is blue. "
        "Information from page 5 states that water is essential."
    )
    boundary = AIMessage(content=[{"type": "text", "text": "It moves."}, cite("IDs: [6]")])
    assert output_text(boundary) == "It moves.\nIDs: [6]"
