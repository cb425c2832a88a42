"""The LLM path against a scripted OpenAI-compatible server, through the real client.

Local servers (llama.cpp, Ollama, vLLM) and cheap hosted models refuse json_schema,
echo prompts, answer ``[]``, stall, rate-limit and reject keys. Each test drives
``langchain_openai.ChatOpenAI`` over loopback HTTP against such a server.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import MemorySaver

from helpers import conversation
from langgraph_librarian import LibrarianConfig, create_librarian_graph, select_and_hydrate
from langgraph_librarian.index import update_index
from openai_server import Reply, ScriptedServer, prompt_of, request_format

SELECTION = {"reasoning": "message 16 changed the budget set in 4", "ids": [4, 16]}


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[ScriptedServer] = []

    def start(handler) -> ScriptedServer:
        server = ScriptedServer(handler).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def client(server: ScriptedServer, **kwargs: Any) -> ChatOpenAI:
    settings = {"timeout": 5.0, "max_retries": 0, **kwargs}
    return ChatOpenAI(base_url=server.url, api_key="sk-test", model="local", **settings)


def first_sentence_of(body: dict[str, Any]) -> str:
    """A faithful summary (summaries are validated): the message's first sentences."""
    text = prompt_of(body).rsplit("<message>", 1)[-1].split("</message>", 1)[0].strip()
    return ". ".join(text.split(". ")[:2])


def is_selection(body: dict[str, Any]) -> bool:
    return "librarian of a long conversation" in prompt_of(body)


def state() -> dict[str, Any]:
    messages = [*conversation(12), HumanMessage("What is the offsite budget now?", id="q")]
    entries = update_index(messages, [], LibrarianConfig(embeddings=None)).entries
    return {"messages": messages, "index": [e.to_dict() for e in entries]}


def select(model: Any, **config: Any) -> dict[str, Any]:
    settings = {"selector_model": model, "indexer_model": "local", "retry_backoff": 0, **config}
    run = {"configurable": {"librarian": LibrarianConfig(**settings)}}
    return select_and_hydrate(state(), run)["librarian_metadata"]


# -- 1. stray brackets are not a selection -------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "Looking at the index.\nIDs: []",
        "[]",
        '{"tags": ["budget"]}',
        '["budget", "venue"]',
    ],
)
def test_stray_brackets_fall_back_with_a_reason(serve, answer):
    server = serve(lambda body: Reply(content=answer))
    meta = select(client(server), selector_output="text")
    assert meta["selection_strategy"] == "local_fallback"
    assert meta["fallback_reason"] and meta["selector_answer"] == answer
    assert 16 in meta["selected_ids"]  # the local selector still brings the changed budget


def test_an_echoed_prompt_falls_back(serve):
    server = serve(lambda body: Reply(content=prompt_of(body)))
    meta = select(client(server), selector_output="text")
    assert meta["selection_strategy"] == "local_fallback"
    assert "echoed the prompt" in meta["fallback_reason"]


def test_explicit_none_is_a_selection(serve):
    server = serve(lambda body: Reply(content="Nothing earlier is needed.\nIDs: none"))
    meta = select(client(server), selector_output="text")
    assert meta["selection_strategy"] == "llm" and meta["model_selected_ids"] == []


# -- 2. structured output is a ladder, not all or nothing ----------------------------------


def json_mode_only(body: dict[str, Any]) -> Reply:
    kind = request_format(body)
    if kind == "json_schema":
        return Reply(status=500, error="json_schema is not supported by this server")
    if kind == "json_object":
        return Reply(content=json.dumps(SELECTION))
    return Reply(content="I will not use JSON.")


def test_json_mode_only_server_selects_through_the_llm(serve):
    server = serve(json_mode_only)
    model = client(server)
    first = select(model)
    assert first["selection_strategy"] == "llm" and first["model_selected_ids"] == [4, 16]
    assert server.formats() == ["json_schema", "json_object"]  # one refusal, no retries of it
    second = select(model)
    assert second["selection_strategy"] == "llm"
    assert server.formats()[2:] == ["json_object"]  # the working form is remembered


def test_json_mode_only_server_through_a_provider_string(serve, monkeypatch):
    server = serve(json_mode_only)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_API_BASE", server.url)
    meta = select("openai:local-model")
    assert meta["selection_strategy"] == "llm"
    # The client was built without its own retries: the 500 was sent once, not three times.
    assert server.formats() == ["json_schema", "json_object"]
    assert server.requests[0]["max_completion_tokens"] == 1024  # output limit passed


def test_text_only_server_selects_from_the_ids_line(serve):
    def text_only(body: dict[str, Any]) -> Reply:
        if request_format(body) != "text":
            return Reply(status=400, error="response_format is not supported")
        return Reply(content="Message 16 changes message 4.\nIDs: [4, 16]")

    server = serve(text_only)
    meta = select(client(server))
    assert meta["selection_strategy"] == "llm" and meta["model_selected_ids"] == [4, 16]
    assert server.formats() == ["json_schema", "json_object", "text"]


# -- 3. bad summaries are not stored as summaries -------------------------------------------


LONG = (
    "I have a severe nut allergy, peanuts and cashews included, so please keep every "
    "recipe free of nuts. We also agreed to cook for six people on Saturday. " * 3
)


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        (lambda body: prompt_of(body), "repeated its instructions"),
        (lambda body: "I'm sorry, but I can't help with summarizing that.", "refused"),
        (lambda body: "", "empty summary"),
        (lambda body: "Quarterly revenue of the mining division rose in Chile.", "no words"),
    ],
)
def test_bad_summaries_fall_back_to_marked_extractive_entries(serve, answer, problem):
    server = serve(lambda body: Reply(content=answer(body)))
    config = LibrarianConfig(indexer_model=client(server), retry_backoff=0)
    update = update_index([HumanMessage(LONG, id="m")], [], config)
    entry = update.entries[0]
    assert entry.status == "fallback"
    assert "nut allergy" in entry.summary  # the extractive summary keeps the fact
    assert problem in update.errors[0]


def test_wrapper_tags_are_stripped_from_a_good_summary(serve):
    summary = "<message>The user has a severe nut allergy; cooking for six on Saturday.</message>"
    server = serve(lambda body: Reply(content=summary))
    config = LibrarianConfig(indexer_model=client(server), retry_backoff=0)
    entry = update_index([HumanMessage(LONG, id="m")], [], config).entries[0]
    assert entry.status == "summarized"
    assert entry.summary == "The user has a severe nut allergy; cooking for six on Saturday."


# -- 4. time is bounded ----------------------------------------------------------------------


def test_a_stalled_selector_costs_at_most_the_turn_budget(serve):
    server = serve(lambda body: Reply(content="IDs: [4]", delay=20))
    model = client(server, timeout=None)  # the client itself would wait forever
    start = time.monotonic()
    meta = select(model, model_timeout=0.5, max_retries=5, selection_timeout=1.5)
    elapsed = time.monotonic() - start
    assert meta["selection_strategy"] == "local_fallback"
    assert "time budget" in meta["fallback_reason"] or "exceeded" in meta["fallback_reason"]
    assert elapsed < 10  # far below the 20 s stall: the budget, not the server, decided
    assert len(server.requests) <= 4  # retries stopped at the budget


async def test_a_stalled_selector_is_cancelled_async(serve):
    server = serve(lambda body: Reply(content="IDs: [4]", delay=20))
    config = LibrarianConfig(
        selector_model=client(server, timeout=None),
        indexer_model="local",
        model_timeout=0.5,
        selection_timeout=1.0,
        retry_backoff=0,
    )
    start = time.monotonic()
    out = await select_and_hydrate.ainvoke(state(), {"configurable": {"librarian": config}})
    assert time.monotonic() - start < 10
    assert out["librarian_metadata"]["selection_strategy"] == "local_fallback"


def test_concurrency_adapts_to_a_one_at_a_time_server(serve):
    gate = threading.Lock()
    in_flight = {"now": 0, "peak_after_learning": 0}
    learned = threading.Event()

    def one_at_a_time(body: dict[str, Any]) -> Reply:
        in_flight["now"] += 1
        if learned.is_set():
            in_flight["peak_after_learning"] = max(
                in_flight["peak_after_learning"], in_flight["now"]
            )
        with gate:  # the server works on one request at a time
            time.sleep(0.15)
        in_flight["now"] -= 1
        return Reply(content=first_sentence_of(body))

    server = serve(one_at_a_time)
    model = client(server)
    config = LibrarianConfig(
        indexer_model=model, model_timeout=0.4, max_retries=0, max_concurrency=16
    )
    first = update_index(conversation(8), [], config)  # 16 long messages at once
    assert first.failed_count > 0  # queued requests timed out...
    deadline = time.monotonic() + 15
    while in_flight["now"] and time.monotonic() < deadline:  # the server drains its queue
        time.sleep(0.05)
    learned.set()
    second = update_index(conversation(8, with_ids=False), [], config)
    assert in_flight["peak_after_learning"] <= 4  # ...so the next pass sends far fewer at once
    assert second.failed_count < first.failed_count


# -- 7. HTTP errors: rate limits are retried, bad keys are not --------------------------------


def test_rate_limit_is_retried(serve):
    answers = iter([Reply(status=429, error="slow down"), Reply(content="IDs: [4, 16]")])
    server = serve(lambda body: next(answers))
    meta = select(client(server), selector_output="text")
    assert meta["selection_strategy"] == "llm"
    assert len(server.requests) == 2


@pytest.mark.parametrize("status", [401, 403])
def test_bad_key_raises_unretried_through_the_real_client(serve, status):
    """The openai client's AuthenticationError / PermissionDeniedError (as langchain_openai
    re-raises them) comes out of the turn: a local fallback every turn hid a revoked key."""
    import openai

    server = serve(lambda body: Reply(status=status, error="invalid api key"))
    with pytest.raises(openai.APIStatusError) as raised:
        select(client(server), max_retries=3)
    assert raised.value.status_code == status
    assert len(server.requests) == 1  # not retried, and no simpler form tried


def test_unknown_model_raises_after_the_simpler_forms(serve):
    """A 404 to a structured form may be that form's refusal: the simpler forms are asked,
    and a 404 to plain text (an unknown model) raises."""
    import openai

    server = serve(lambda body: Reply(status=404, error="model 'gpt-nope' not found"))
    with pytest.raises(openai.NotFoundError):
        select(client(server), max_retries=3)
    assert [request_format(body) for body in server.requests][-1] == "text"


def test_json_schema_refused_with_404_still_selects(serve):
    def answer(body: dict[str, Any]) -> Reply:
        if request_format(body) == "json_schema":
            return Reply(status=404, error="response_format json_schema not found")
        return Reply(content=json.dumps({"ids": [4, 16], "reasoning": "budget"}))

    server = serve(answer)
    meta = select(client(server))
    assert meta["selection_strategy"] == "llm"
    assert request_format(server.requests[0]) == "json_schema"


# -- streaming: only the agent's tokens ---------------------------------------------------------


def test_streamed_reply_over_http_carries_only_the_agents_tokens(serve):
    def answer(body: dict[str, Any]) -> Reply:
        if is_selection(body):
            return Reply(content=json.dumps(SELECTION))
        if "searchable index" in prompt_of(body):
            return Reply(content="Summary about the offsite budget and the venue choice.")
        return Reply(content="The budget is now 15,500 dollars.")

    server = serve(answer)
    model = client(server)
    config = LibrarianConfig(indexer_model=model, selector_model=model, retry_backoff=0)

    def agent(state: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [model.invoke(list(state["curated_messages"]))]}

    graph = create_librarian_graph(agent, config, checkpointer=MemorySaver())
    cfg = {"configurable": {"thread_id": "http"}}
    graph.invoke({"messages": conversation(6)}, cfg)
    chunks = list(
        graph.stream(
            {"messages": [HumanMessage("What is the budget now?")]}, cfg, stream_mode="messages"
        )
    )
    text = "".join(str(message.content) for message, _ in chunks)
    assert text == "The budget is now 15,500 dollars."
    assert not re.search(r"\bids\b|reasoning|Summary about", text)
