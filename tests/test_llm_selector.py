from __future__ import annotations

import asyncio
import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from fakes import ScriptedChatModel, ToolCallingScriptedModel
from helpers import conversation
from langgraph_librarian import LibrarianConfig, select_and_hydrate
from langgraph_librarian.index import update_index
from langgraph_librarian.select import LLMSelector, LocalSelector


def state_for(turns=12, question="What is the offsite budget now?"):
    messages = [*conversation(turns), HumanMessage(question, id="q")]
    index = update_index(messages, [], LibrarianConfig()).entries
    return {"messages": messages, "index": [e.to_dict() for e in index]}


def run(selector_model, **kwargs):
    config = LibrarianConfig(
        selector_model=selector_model, indexer_model="local", retry_backoff=0, **kwargs
    )
    return select_and_hydrate(state_for(), {"configurable": {"librarian": config}})


async def arun_both(make_model, **kwargs):
    """(model, ``librarian_metadata``) of a sync and an async selection, each with a
    fresh model."""
    runs = []
    for asynchronous in (False, True):
        model = make_model()
        config = LibrarianConfig(
            selector_model=model, indexer_model="local", retry_backoff=0, **kwargs
        )
        run_config = {"configurable": {"librarian": config}}
        if asynchronous:
            result = await select_and_hydrate.ainvoke(state_for(), run_config)
        else:
            result = select_and_hydrate.invoke(state_for(), run_config)
        runs.append((model, result["librarian_metadata"]))
    return runs


@pytest.mark.parametrize(
    "failure",
    [RuntimeError("500 from provider"), "I refuse to answer", "IDs: [999]"],
)
def test_selector_failures_fall_back_to_local_and_say_so(failure):
    model = ScriptedChatModel(script=failure)
    result = run(model, max_retries=1)
    meta = result["librarian_metadata"]
    assert meta["selection_strategy"] == "local_fallback"
    assert meta["selection_fallback"] is True
    assert meta["fallback_reason"]
    ids = {m.id for m in result["curated_messages"]}
    assert {"h2", "h8"} <= ids  # the fallback still finds the budget messages
    assert result["curated_messages"][-1].id == "q"


def test_selector_timeout_falls_back():
    model = ScriptedChatModel(script="IDs: [1]", latency=1.0)
    result = run(model, model_timeout=0.1, max_retries=0)
    assert result["librarian_metadata"]["selection_strategy"] == "local_fallback"
    assert "Timeout" in result["librarian_metadata"]["fallback_reason"]


class _DeafToCancellation(ScriptedChatModel):
    """An async model that catches its first cancellation and goes on waiting (a client
    that swallows ``CancelledError`` to retry): ``asyncio.wait_for`` waited for it as
    long as it liked. A second cancellation (the event loop's at its close) ends it."""

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):
        self.calls.append(messages)
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            await asyncio.sleep(3600)
        raise AssertionError("unreachable")


async def test_an_async_model_ignoring_its_cancellation_is_abandoned_not_awaited():
    # Found by a newcomer trial: such a model hung ainvoke past every timeout.
    model = _DeafToCancellation(script="IDs: [1]")
    config = LibrarianConfig(
        selector_model=model, indexer_model="local", model_timeout=0.2, max_retries=2
    )
    result = await asyncio.wait_for(
        select_and_hydrate.ainvoke(state_for(), {"configurable": {"librarian": config}}), 10
    )
    meta = result["librarian_metadata"]
    assert meta["selection_strategy"] == "local_fallback"
    assert "ignored its cancellation" in meta["fallback_reason"]
    assert len(model.calls) == 1  # left running, so never retried over itself
    assert result["curated_messages"][-1].id == "q"


def test_explicit_none_is_respected():
    answer = "Nothing earlier matters.\nIDs: none"
    result = run(ScriptedChatModel(script=answer), selector_keeps_local=False)
    meta = result["librarian_metadata"]
    assert meta["selection_strategy"] == "llm" and meta["selected_ids"] == []
    assert [m.id for m in result["curated_messages"]] == ["h11", "a11", "q"]
    # By default the offline engine's own selection stays next to the model's "none".
    meta = run(ScriptedChatModel(script=answer))["librarian_metadata"]
    assert meta["model_selected_ids"] == [] and 16 in meta["kept_local_ids"]


@pytest.mark.parametrize(
    "answer",
    [
        "Nothing earlier matters.\nIDs: []",  # ambiguous: also what an echo of the example gives
        '{"tags": ["budget"]}',
        "[]",
    ],
)
def test_empty_or_stray_lists_fall_back_with_a_reason(answer):
    meta = run(ScriptedChatModel(script=answer))["librarian_metadata"]
    assert meta["selection_strategy"] == "local_fallback"
    assert meta["fallback_reason"]
    assert meta["selection_reasoning"].startswith("[local fallback: ")
    assert meta["selector_answer"] == answer
    assert 16 in meta["selected_ids"]  # the local selector found the changed budget


def test_reasoning_is_reported():
    result = run(ScriptedChatModel(script="Message 16 changes message 4.\nIDs: [4, 16]"))
    meta = result["librarian_metadata"]
    assert meta["selection_reasoning"].startswith("Message 16 changes")
    assert meta["model_selected_ids"] == [4, 16] and {4, 16} <= set(meta["selected_ids"])


def test_a_long_reasoning_is_kept_short_in_the_metadata():
    # The metadata is checkpointed every turn: 200 KB of reasoning must not ride along.
    long = "Message 16 changes message 4. " * 7000
    meta = run(ScriptedChatModel(script=f"{long}\nIDs: [4, 16]"))["librarian_metadata"]
    assert meta["model_selected_ids"] == [4, 16]
    assert meta["selection_reasoning"].startswith("Message 16 changes")
    assert len(meta["selection_reasoning"]) == 2000
    assert len(meta["selector_answer"]) <= 2000


def test_structured_output_when_supported():
    answer = AIMessage(
        content="",
        tool_calls=[
            {
                "name": "SelectionOutput",
                "args": {"reasoning": "budget msgs", "ids": [16, 4]},
                "id": "call1",
                "type": "tool_call",
            }
        ],
    )
    model = ToolCallingScriptedModel(script=[answer])
    result = run(model)
    assert model.bound, "with_structured_output should bind the schema as a tool"
    meta = result["librarian_metadata"]
    assert meta["selection_strategy"] == "llm"
    assert meta["model_selected_ids"] == [16, 4] and {4, 16} <= set(meta["selected_ids"])
    assert meta["selection_reasoning"] == "budget msgs"


def _tool_call(args, name="SelectionOutput"):
    return AIMessage(
        content="", tool_calls=[{"name": name, "args": args, "id": "c1", "type": "tool_call"}]
    )


@pytest.mark.parametrize("args", [{"ids": [16, 4]}, {"reasoning": None, "ids": [16, 4]}])
async def test_a_tool_call_without_reasoning_is_a_selection(args):
    """Small models skip the optional-looking ``reasoning``: the ids still count."""
    both = await arun_both(
        lambda: ToolCallingScriptedModel(script=_tool_call(args)), selector_output="auto"
    )
    for model, meta in both:
        assert model.bound, "the selector asked for a tool call"
        assert meta["selection_strategy"] == "llm", meta.get("fallback_reason")
        assert meta["model_selected_ids"] == [16, 4] and {4, 16} <= set(meta["selected_ids"])
        assert json.loads(meta["selector_answer"]) == args  # the call, not ""


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        ({"reasoning": "r", "ids": [999, 1000]}, "unknown ids"),
        ({"ids": ["first", "second"]}, "structured answer invalid (ids)"),
        ({"ids": [True]}, "structured answer invalid (ids)"),
    ],
)
async def test_a_tool_call_with_unusable_ids_falls_back_and_says_why(args, reason):
    for _, meta in await arun_both(lambda: ToolCallingScriptedModel(script=_tool_call(args))):
        assert meta["selection_strategy"] == "local_fallback"
        assert reason in meta["fallback_reason"]
        assert not meta.get("model_selected_ids")
        assert not {1, 999, 1000} & set(meta["selected_ids"])
        assert json.loads(meta["selector_answer"]) == args


async def test_text_blocks_are_read_as_separate_lines():
    """Two text blocks ("...in message 16" + "IDs: [16]") are two lines, not glued into
    "message 16IDs: [16]" (which is numbers in prose, not an IDs line)."""
    answer = AIMessage(
        content=[
            {"type": "thinking", "thinking": "IDs: [4]", "signature": "s"},
            {"type": "text", "text": "The new budget is in message 16"},
            {"type": "text", "text": "IDs: [16]"},
        ]
    )
    for _, meta in await arun_both(lambda: ScriptedChatModel(script=answer)):
        assert meta["selection_strategy"] == "llm", meta.get("fallback_reason")
        assert meta["model_selected_ids"] == [16]  # the thinking block's ids are not read


def test_structured_output_unparsable_falls_back_to_text():
    model = ToolCallingScriptedModel(script=["no tool call here but IDs: [4]"])
    result = run(model, selector_keeps_local=False)
    assert result["librarian_metadata"]["selected_ids"] == [4]


async def test_async_path():
    model = ScriptedChatModel(script="IDs: [4]")
    config = LibrarianConfig(selector_model=model, indexer_model="local")
    result = await select_and_hydrate.ainvoke(state_for(), {"configurable": {"librarian": config}})
    assert result["librarian_metadata"]["model_selected_ids"] == [4]
    assert 4 in result["librarian_metadata"]["selected_ids"]
    assert model.async_calls == 1


def test_prompt_is_bounded_for_huge_index():
    messages = []
    for i in range(3000):
        messages.append(
            HumanMessage(f"note {i}: " + "topic words about planning " * 12, id=f"m{i}")
        )
    messages[1234] = HumanMessage("The secret launch code is PELICAN-7. " * 8, id="m1234")
    messages.append(HumanMessage("What is the launch code?", id="q"))
    entries = update_index(messages, [], LibrarianConfig()).entries
    model = ScriptedChatModel(script="IDs: [1234]")
    selector = LLMSelector(model, local=LocalSelector(), token_budget=2000)
    selection = selector.select("What is the launch code?", messages, entries, exclude={3000})
    assert selection.shortlisted
    assert selection.prompt_tokens <= 2000
    assert "PELICAN" in model.calls[0][0].content  # the relevant entry survived the shortlist
    assert selection.model_ids == [1234] and 1234 in selection.ids


def test_llm_indexer_with_local_selector():
    from langgraph_librarian import LOCAL

    # The message's first words (a character slice, as this test used, begins and ends
    # mid-word: now read as an answer cut off, its cut sentence dropped).
    indexer = ScriptedChatModel(
        script=lambda msgs: (
            "Summary: " + " ".join(msgs[-1].content.split("<message>\n", 1)[-1].split()[:14])
        )
    )
    config = LibrarianConfig(indexer_model=indexer, selector_model=LOCAL, retry_backoff=0)
    messages = [*conversation(6), HumanMessage("What is the offsite budget now?", id="q")]
    index = update_index(messages, [], config).entries
    assert indexer.calls and all(e.status in {"summarized", "verbatim"} for e in index)
    assert not index[0].summary.startswith("Summary:")  # the label is stripped
    result = select_and_hydrate(
        {"messages": messages, "index": [e.to_dict() for e in index]},
        {"configurable": {"librarian": config}},
    )
    assert result["librarian_metadata"]["selection_strategy"] == "local"
    assert "h2" in {m.id for m in result["curated_messages"]}


def test_an_echoed_prompt_falls_back():
    echo = ScriptedChatModel(script=lambda messages: str(messages[-1].content))
    meta = run(echo)["librarian_metadata"]
    assert meta["selection_strategy"] == "local_fallback"
    assert "echoed the prompt" in meta["fallback_reason"]


def test_refused_forms_are_remembered_per_model_not_only_successes():
    from fakes import StatusError
    from langgraph_librarian.select import _ladder

    class RefusesTools(ToolCallingScriptedModel):
        def bind_tools(self, tools, **kwargs):  # type: ignore[override]
            raise NotImplementedError("no tools here")

    model = ToolCallingScriptedModel(script=[StatusError(500, "json_schema unsupported"), "?"])
    run(model)
    assert "structured" not in _ladder.rungs(model, "auto")
    other = ToolCallingScriptedModel(script="IDs: [4]")
    assert _ladder.rungs(other, "auto")[0] == "structured"  # per model object
    assert _ladder.rungs(RefusesTools(), "text") == ["text"]


def test_a_length_limited_answer_is_kept_and_retried_once():
    cut = AIMessage(
        content="Let me go through every", response_metadata={"finish_reason": "length"}
    )
    model = ScriptedChatModel(script=[cut, cut, "IDs: [4]"])
    meta = run(model, selector_output="text")["librarian_metadata"]
    assert meta["selection_strategy"] == "local_fallback"
    assert "output-token limit" in meta["fallback_reason"]
    assert meta["selector_answer"] == "Let me go through every"
    assert len(model.calls) == 2  # one shorter request, then the local selector
    assert "cut off" in str(model.calls[1][-1].content)


def _paraphrase_history() -> list:
    """400 notes and one fact that shares no word with the question asked about it."""
    fillers = [
        "note {i}: we talked about the quarterly planning spreadsheet and meeting rooms again",
        "note {i}: the printer on floor three jammed during the budget review",
        "note {i}: lunch order for the team offsite, sandwiches and coffee",
    ]
    messages = [HumanMessage(fillers[i % 3].format(i=i), id=f"m{i}") for i in range(400)]
    messages[200] = HumanMessage("My daughter practises the cello every evening.", id="m200")
    return messages


PARAPHRASE_QUESTION = "Which musical instrument does my kid play?"


@pytest.mark.embeddings
def test_rank_uses_the_embedding_model_like_select():
    from langgraph_librarian.embeddings import default_embeddings

    messages = _paraphrase_history()
    embeddings = default_embeddings()
    entries = update_index(messages, [], LibrarianConfig(embeddings=embeddings)).entries
    local = LocalSelector(embeddings=embeddings)
    ranked = local.rank(PARAPHRASE_QUESTION, messages, entries)
    assert ranked[0][0] == 200  # no shared word: only the meaning finds it
    assert local.select(PARAPHRASE_QUESTION, messages, entries).ids[0] == 200
    assert 200 not in [p for p, _ in LocalSelector().rank(PARAPHRASE_QUESTION, messages, entries)]
    scores = local.scores(PARAPHRASE_QUESTION, messages, entries)
    assert int(scores.argmax()) == 200 and scores[200] == ranked[0][1]


@pytest.mark.embeddings
async def test_arank_matches_rank():
    from langgraph_librarian.embeddings import default_embeddings

    messages = _paraphrase_history()
    embeddings = default_embeddings()
    entries = update_index(messages, [], LibrarianConfig(embeddings=embeddings)).entries
    local = LocalSelector(embeddings=embeddings)
    assert await local.arank(PARAPHRASE_QUESTION, messages, entries) == local.rank(
        PARAPHRASE_QUESTION, messages, entries
    )


@pytest.mark.embeddings
@pytest.mark.parametrize("asynchronous", [False, True])
async def test_shortlist_finds_by_meaning_when_the_index_does_not_fit(asynchronous):
    """A shortlisted prompt keeps the message the question means, not only its words."""
    from langgraph_librarian.embeddings import default_embeddings

    messages = [*_paraphrase_history(), HumanMessage(PARAPHRASE_QUESTION, id="q")]
    embeddings = default_embeddings()
    entries = update_index(messages, [], LibrarianConfig(embeddings=embeddings)).entries
    model = ScriptedChatModel(script="IDs: [200]")
    selector = LLMSelector(model, local=LocalSelector(embeddings=embeddings), token_budget=800)
    if asynchronous:
        selection = await selector.aselect(PARAPHRASE_QUESTION, messages, entries, exclude={400})
    else:
        selection = selector.select(PARAPHRASE_QUESTION, messages, entries, exclude={400})
    assert selection.shortlisted and selection.prompt_tokens <= 800
    assert "cello" in model.calls[0][0].content
    assert selection.model_ids == [200] and 200 in selection.ids


@pytest.mark.embeddings
async def test_async_fallback_embeds_the_query_asynchronously():
    """A failed async selection falls back without a blocking query embedding."""
    from langchain_core.embeddings import Embeddings

    from langgraph_librarian.embeddings import default_embeddings

    class Recording(Embeddings):
        def __init__(self) -> None:
            self.inner = default_embeddings()
            self.model_id = "recording-static"
            self.queries: list[str] = []

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return self.inner.embed_documents(texts)

        def embed_query(self, text: str) -> list[float]:
            self.queries.append("sync")
            return self.inner.embed_query(text)

        async def aembed_query(self, text: str) -> list[float]:
            self.queries.append("async")
            return self.inner.embed_query(text)

    class Broken:
        """A custom selector that raises (the turn falls back to the offline engine)."""

        def select(self, *args: object, **kwargs: object) -> None:
            raise RuntimeError("selector bug")

        async def aselect(self, *args: object, **kwargs: object) -> None:
            raise RuntimeError("selector bug")

    embeddings = Recording()
    config = LibrarianConfig(selector=Broken(), embeddings=embeddings)  # type: ignore[arg-type]
    state = state_for()
    result = await select_and_hydrate.ainvoke(state, {"configurable": {"librarian": config}})
    assert result["librarian_metadata"]["selection_strategy"] == "local_fallback"
    assert embeddings.queries and set(embeddings.queries) == {"async"}
