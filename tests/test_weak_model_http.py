"""A weak model behind a real OpenAI-compatible server: what it must not be able to do.

Each test drives ``langchain_openai.ChatOpenAI`` over loopback HTTP against the scripted
server in ``openai_server.py``: a one-slot server (like llama.cpp with one slot) for the
pile-up tests, length-limited answers, refused output forms, echoed example lines, prose
that looks like a selection, and a server that ignores ``max_completion_tokens``.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI

from helpers import conversation
from langgraph_librarian import LibrarianConfig, select_and_hydrate
from langgraph_librarian.cli import main
from langgraph_librarian.index import update_index
from openai_server import Reply, ScriptedServer, prompt_of, request_format

SELECTION = {"reasoning": "message 16 changed the budget set in 4", "ids": [4, 16]}


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[ScriptedServer] = []

    def start(handler, **kwargs: Any) -> ScriptedServer:
        server = ScriptedServer(handler, **kwargs).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def client(server: ScriptedServer, **kwargs: Any) -> ChatOpenAI:
    settings = {"timeout": 5.0, "max_retries": 0, **kwargs}
    return ChatOpenAI(base_url=server.url, api_key="sk-test", model="local", **settings)


def is_selection(body: dict[str, Any]) -> bool:
    return "librarian of a long conversation" in prompt_of(body)


def state() -> dict[str, Any]:
    messages = [*conversation(12), HumanMessage("What is the offsite budget now?", id="q")]
    entries = update_index(messages, [], LibrarianConfig(embeddings=None)).entries
    return {"messages": messages, "index": [e.to_dict() for e in entries]}


def settings(model: Any, **config: Any) -> dict[str, Any]:
    values = {"selector_model": model, "indexer_model": "local", "retry_backoff": 0, **config}
    return {"configurable": {"librarian": LibrarianConfig(**values)}}


def select(model: Any, **config: Any) -> dict[str, Any]:
    return select_and_hydrate(state(), settings(model, **config))["librarian_metadata"]


# -- no pile-up on a one-slot server ---------------------------------------------------------


def stalled_selection(body: dict[str, Any]) -> Reply:
    if is_selection(body):
        return Reply(content="IDs: [4]", delay=30)  # a weak model that never finishes
    return Reply(content="pong")


def _assert_slot_free(server: ScriptedServer, model: ChatOpenAI) -> None:
    start = time.monotonic()
    while not all(s.ended for s in server.served) and time.monotonic() - start < 1:
        time.sleep(0.02)  # the server notices a closed connection within its poll interval
    selections = list(server.served)
    assert selections and all(s.abandoned for s in selections)  # every request was closed
    for before, after in itertools.pairwise(selections):
        assert after.started >= before.ended  # attempts never overlapped
    start = time.monotonic()
    assert model.invoke("ping").content == "pong"
    assert time.monotonic() - start < 1.5  # the next call waited for no abandoned request
    assert server.served[-1].started - server.served[-1].arrived < 1.0


def test_sync_timeouts_close_their_requests_on_a_one_slot_server(serve):
    server = serve(stalled_selection, one_at_a_time=True)
    model = client(server, timeout=None)  # the client alone would wait forever
    start = time.monotonic()
    meta = select(model, model_timeout=0.5, max_retries=2, selection_timeout=4)
    assert time.monotonic() - start < 6
    assert meta["selection_strategy"] == "local_fallback"
    assert len(server.served) == 3  # the first attempt and two retries, one after another
    _assert_slot_free(server, model)


async def test_async_timeouts_cancel_their_requests_on_a_one_slot_server(serve):
    server = serve(stalled_selection, one_at_a_time=True)
    model = client(server, timeout=None)
    out = await select_and_hydrate.ainvoke(
        state(), settings(model, model_timeout=0.5, max_retries=1, selection_timeout=3)
    )
    assert out["librarian_metadata"]["selection_strategy"] == "local_fallback"
    assert len(server.served) == 2
    _assert_slot_free(server, model)


def test_the_turn_budget_closes_the_request_too(serve):
    server = serve(stalled_selection, one_at_a_time=True)
    model = client(server, timeout=None)
    meta = select(model, model_timeout=60, max_retries=0, selection_timeout=1)
    # Our timer or the client's (set to the same deadline) may end it first.
    assert any(w in meta["fallback_reason"] for w in ("exceeded", "time budget", "timed out"))
    _assert_slot_free(server, model)


def test_a_request_that_cannot_be_closed_is_not_retried():
    from fakes import ScriptedChatModel

    slow = ScriptedChatModel(script="IDs: [4]", latency=1.0)  # no HTTP client to close
    meta = select(slow, model_timeout=0.2, max_retries=3, selection_timeout=5)
    assert meta["selection_strategy"] == "local_fallback"
    assert "not retried" in meta["fallback_reason"]
    time.sleep(2.5)  # let the abandoned attempt finish (calls are recorded at the end)
    assert len(slow.calls) == 1 and slow.peak == 1  # no attempt next to the running one


# -- length-limited answers -----------------------------------------------------------------


def test_a_length_limited_text_answer_is_reported_and_retried_shorter(serve):
    answers = iter(
        [
            Reply(
                content="Let me think step by step about every message in", finish_reason="length"
            ),
            Reply(content="IDs: [4, 16]"),
        ]
    )
    server = serve(lambda body: next(answers))
    meta = select(client(server), selector_output="text")
    assert meta["selection_strategy"] == "llm" and meta["model_selected_ids"] == [4, 16]
    assert "cut off at the length limit" in prompt_of(server.requests[1])


def test_a_length_limited_answer_keeps_its_text(serve):
    cut = "Let me think step by step about every message in"
    server = serve(lambda body: Reply(content=cut, finish_reason="length"))
    meta = select(client(server), selector_output="text")
    assert meta["selection_strategy"] == "local_fallback"
    assert "output-token limit" in meta["fallback_reason"]
    assert meta["selector_answer"] == cut
    assert len(server.requests) == 2  # one shorter retry, not more


def test_a_length_limited_structured_answer_is_reported_not_a_crash(serve):
    cut = '{"reasoning": "Message 4 states the budget and then message 16'
    server = serve(lambda body: Reply(content=cut, finish_reason="length"))
    meta = select(client(server), selector_output="structured")
    assert meta["selection_strategy"] == "local_fallback"
    assert "output-token limit" in meta["fallback_reason"]
    assert "LengthFinishReasonError" not in meta["fallback_reason"]
    assert meta["selector_answer"] == cut


# -- refused output forms are remembered -----------------------------------------------------


def test_a_refused_form_is_not_asked_again_even_without_a_usable_answer(serve):
    def refuses_schema(body: dict[str, Any]) -> Reply:
        if request_format(body) == "json_schema":
            return Reply(status=500, error="json_schema is not supported")
        return Reply(content="I am not sure which messages matter.")

    server = serve(refuses_schema)
    model = client(server)
    first = select(model)
    assert first["selection_strategy"] == "local_fallback"
    assert server.formats() == ["json_schema", "json_object"]
    select(model)
    select(model)
    assert server.formats()[2:] == ["json_object", "json_object"]  # never json_schema again


# -- prose and echoed examples are not selections --------------------------------------------


def test_prose_with_a_colon_is_not_a_selection(serve):
    server = serve(lambda body: Reply(content="I think we need the budget. Paid: 5"))
    meta = select(client(server), selector_output="text")
    assert meta["selection_strategy"] == "local_fallback"
    assert meta["selector_answer"] == "I think we need the budget. Paid: 5"


def test_an_echoed_example_line_of_a_custom_prompt_is_not_a_selection(serve):
    prompt = (
        "Pick the messages needed for the query.\n{query}\n{index}\n"
        "Answer with one line, for example:\nIDs: [2, 7]"
    )
    server = serve(lambda body: Reply(content="IDs: [2, 7]"))
    meta = select(client(server), selector_output="text", selection_prompt=prompt)
    assert meta["selection_strategy"] == "local_fallback"
    assert "example line" in meta["fallback_reason"]


# -- output limits every server honours ------------------------------------------------------


def test_models_built_from_strings_send_max_tokens_to_local_servers(serve, monkeypatch):
    def answer(body: dict[str, Any]) -> Reply:
        if is_selection(body):
            return Reply(content=json.dumps(SELECTION))
        text = prompt_of(body).rsplit("<message>", 1)[-1].split("</message>", 1)[0].strip()
        return Reply(content=". ".join(text.split(". ")[:2]))

    server = serve(answer)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_API_BASE", server.url)
    config = LibrarianConfig(indexer_model="openai:small", selector_model="openai:small")
    messages = [*conversation(3), HumanMessage("What is the offsite budget now?", id="q")]
    entries = update_index(messages, [], config).entries
    state = {"messages": messages, "index": [e.to_dict() for e in entries]}
    select_and_hydrate(state, {"configurable": {"librarian": config}})
    summaries = [r for r in server.requests if not is_selection(r)]
    selections = [r for r in server.requests if is_selection(r)]
    assert summaries and selections
    assert all(r["max_tokens"] == 400 and r["max_completion_tokens"] == 400 for r in summaries)
    assert all(r["max_tokens"] == 1024 for r in selections)


def test_bench_with_a_model_finishes_against_a_server_that_ignores_max_completion_tokens(
    serve, monkeypatch, capsys
):
    """The server reads only max_tokens: without it a summary would run for minutes."""

    def llama_cpp_python(body: dict[str, Any]) -> Reply:
        if "max_tokens" not in body:
            return Reply(content="word " * 8000, delay=60)  # 7,724 tokens, 350 s in practice
        if is_selection(body):
            return Reply(content="IDs: none")
        return Reply(content="OK", finish_reason="length")  # a weak model's answer

    server = serve(llama_cpp_python)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_API_BASE", server.url)
    start = time.monotonic()
    code = main(
        [
            "bench",
            "--dataset",
            "synthetic",
            "--conversations",
            "1",
            "--messages",
            "30",
            "--limit",
            "2",
            "--strategies",
            "librarian-llm",
            "--model",
            "openai:small",
            "--quiet",
        ]
    )
    assert code == 0 and time.monotonic() - start < 50
    out = capsys.readouterr().out
    assert "Model path" in out and "librarian-llm" in out
    assert {r.get("max_tokens") for r in server.requests} <= {400, 1024}
    summaries = [r for r in server.requests if not is_selection(r)]
    assert summaries and all(r["max_tokens"] == 400 for r in summaries)  # the documented cap


def test_bounded_sync_attempts_keep_the_run_config(serve):
    """The per-attempt copy of the client still runs as a child of the user's run."""
    from langchain_core.callbacks import BaseCallbackHandler
    from langgraph.constants import TAG_NOSTREAM

    seen: list[tuple[list[str], dict[str, Any]]] = []

    class Tags(BaseCallbackHandler):
        def on_chat_model_start(self, serialized, messages, *, tags=None, metadata=None, **kw):
            seen.append((list(tags or []), dict(metadata or {})))

    server = serve(lambda body: Reply(content="IDs: [4, 16]"))
    run = settings(client(server), selector_output="text", model_timeout=5)
    run["callbacks"] = [Tags()]
    run["tags"] = ["user-tag"]
    meta = select_and_hydrate(state(), run)["librarian_metadata"]
    assert meta["selection_strategy"] == "llm"
    tags, metadata = seen[0]
    assert {"user-tag", TAG_NOSTREAM, "langgraph_librarian"} <= set(tags)
    assert metadata["librarian_step"] == "select"


def test_openai_itself_gets_only_max_completion_tokens(monkeypatch):
    from langgraph_librarian._engine.models import build_model

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    model = build_model("openai:gpt-4o-mini", "indexer_model", timeout=5)
    assert model.max_tokens == 400 and not model.extra_body  # reasoning models reject max_tokens
    local = build_model("openai:gpt-4o-mini", "x", timeout=5, role="selector_model")
    assert local.max_tokens == 1024
