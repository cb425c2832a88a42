from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from fakes import ScriptedChatModel
from langgraph_librarian import LOCAL, LibrarianConfig
from langgraph_librarian.config import resolve_config, session_id_from_config


def test_spec_defaults():
    config = LibrarianConfig()
    assert config.indexer_model is None and config.selector_model is None
    assert config.always_include_recent_turns == 2
    assert config.short_message_threshold == 200
    assert config.summary_prompt is None and config.selection_prompt is None
    assert config.store is None


def test_model_accessors():
    indexer, selector = ScriptedChatModel(), ScriptedChatModel()
    assert LibrarianConfig(indexer_model=indexer).get_selector_model() is indexer
    assert (
        LibrarianConfig(indexer_model=indexer, selector_model=selector).get_selector_model()
        is selector
    )
    with pytest.raises(ValueError):
        LibrarianConfig().get_indexer_model()
    with pytest.raises(ValueError):
        LibrarianConfig().get_selector_model()
    mixed = LibrarianConfig(indexer_model=indexer, selector_model=LOCAL)
    assert mixed.uses_local_selector and not mixed.uses_local_indexer
    assert LibrarianConfig(selector_model=selector).uses_local_indexer


def test_model_strings_go_through_init_chat_model():
    config = LibrarianConfig(indexer_model="no-such-provider:model-x")
    with pytest.raises(ValueError, match="no-such-provider"):
        config.get_indexer_model()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"always_include_recent_turns": -1},
        {"short_message_threshold": -5},
        {"max_concurrency": 0},
        {"selection_prompt": "no placeholders"},
        {"selection_prompt": "only {query}"},
        {"model_timeout": 0},
        {"context_token_budget": 0},
        {"selector_token_budget": 10},
    ],
)
def test_invalid_values_are_rejected(kwargs):
    with pytest.raises(ValueError):
        LibrarianConfig(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"always_include_recent_turns": "3"}, "always_include_recent_turns"),
        ({"always_include_recent_turns": None}, "always_include_recent_turns"),
        ({"always_include_recent_turns": 2.5}, "always_include_recent_turns"),
        ({"max_selected": 2.5}, "max_selected"),
        ({"short_message_threshold": "200"}, "short_message_threshold"),
        ({"max_retries": True}, "max_retries"),
        ({"model_timeout": "30"}, "model_timeout"),
        ({"retry_backoff": None}, "retry_backoff"),
        ({"running_summary_tokens": 99.5}, "running_summary_tokens"),
        ({"background_indexing": "yes"}, "background_indexing"),
    ],
)
def test_values_of_the_wrong_type_name_their_field(kwargs, field):
    """Values from JSON or the environment fail at once, naming the field, not mid-turn."""
    with pytest.raises(TypeError, match=field):
        LibrarianConfig(**kwargs)


def test_numeric_types_that_are_numbers_are_accepted():
    import numpy as np

    config = LibrarianConfig(max_selected=np.int64(8), model_timeout=np.float32(5))
    assert config.max_selected == 8 and type(config.max_selected) is int


def test_store_must_follow_protocol():
    with pytest.raises(TypeError):
        LibrarianConfig(store=object())  # type: ignore[arg-type]


def test_runtime_override():
    base = LibrarianConfig(always_include_recent_turns=4)
    assert resolve_config(base, None) is base
    assert resolve_config(None, None) == LibrarianConfig()
    other = LibrarianConfig(short_message_threshold=10)
    assert resolve_config(base, {"configurable": {"librarian": other}}) is other
    merged = resolve_config(base, {"configurable": {"librarian": {"short_message_threshold": 9}}})
    assert merged.short_message_threshold == 9 and merged.always_include_recent_turns == 4
    with pytest.raises(ValueError, match="bogus"):
        resolve_config(base, {"configurable": {"librarian": {"bogus": 1}}})
    with pytest.raises(TypeError):
        resolve_config(base, {"configurable": {"librarian": 42}})


def test_session_id():
    assert session_id_from_config({"configurable": {"thread_id": 7}}) == "7"
    assert session_id_from_config(None) is None
    assert session_id_from_config({"configurable": {"thread_id": ""}}) is None


def test_a_model_that_cannot_be_built_is_a_librarian_error():
    from langgraph_librarian._engine.models import LazyModel
    from langgraph_librarian.errors import LibrarianError, ModelConfigError

    def failing(spec: str):
        raise RuntimeError("no credentials")

    lazy = LazyModel("openai:gpt-4o-mini", slot="summarizer", build=failing)
    with pytest.raises(LibrarianError, match="no credentials") as caught:
        lazy.get()
    assert isinstance(caught.value, ModelConfigError) and isinstance(caught.value, ValueError)


def test_one_call_policy_reaches_every_model_step_the_config_builds():
    from langgraph_librarian._engine.calls import CallPolicy
    from langgraph_librarian._librarian.gist import summarizer_for
    from langgraph_librarian._librarian.turn import make_selector
    from langgraph_librarian.index.pipeline import _summarizer

    model = ScriptedChatModel(script="IDs: [0]")
    config = LibrarianConfig(
        indexer_model=model,
        selector_model=model,
        model_timeout=7.0,
        max_retries=4,
        retry_backoff=0.25,
        running_summary_tokens=200,
    )
    assert config.call_policy == CallPolicy(7.0, 4, 0.25)
    selector = make_selector(config)
    assert selector.policy == config.call_policy  # type: ignore[attr-defined]
    caller = _summarizer(config).caller
    assert (caller.timeout, caller.retries) == (7.0, 4)
    summary = summarizer_for(config)
    assert (summary.timeout, summary.max_retries, summary.retry_backoff) == (7.0, 4, 0.25)


# -- configuration problems surface when the graph is built or at the first turn --------------


def _ask(graph_or_agent, thread: str = "t") -> dict:
    from helpers import conversation

    # The first turn indexes the history; the second one selects from it.
    config = {"configurable": {"thread_id": thread}}
    graph_or_agent.invoke({"messages": conversation(6)}, config)
    return graph_or_agent.invoke({"messages": [HumanMessage("What did we say about it?")]}, config)


@pytest.mark.parametrize("selector_model", ["nonsense-model-name", "openai:gpt-4o-mini"])
def test_a_selector_model_string_that_cannot_become_a_model_raises(monkeypatch, selector_model):
    """Not a silent fall-back to the local selector on every turn (the indexer raises too)."""
    from langgraph.checkpoint.memory import InMemorySaver

    from langgraph_librarian import create_librarian_graph
    from langgraph_librarian.errors import ModelConfigError

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = LibrarianConfig(selector_model=selector_model)
    graph = create_librarian_graph(
        lambda state: {"messages": []}, config, checkpointer=InMemorySaver()
    )
    with pytest.raises(ModelConfigError, match="selector_model"):
        _ask(graph)


async def test_a_selector_model_that_cannot_be_built_raises_async(monkeypatch):
    from langgraph.checkpoint.memory import InMemorySaver

    from helpers import conversation
    from langgraph_librarian import create_librarian_graph
    from langgraph_librarian.errors import ModelConfigError

    graph = create_librarian_graph(
        lambda state: {"messages": []},
        LibrarianConfig(selector_model="nonsense-model-name"),
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "a"}}
    await graph.ainvoke({"messages": conversation(6)}, config)
    with pytest.raises(ModelConfigError):
        await graph.ainvoke({"messages": [HumanMessage("And the other thing?")]}, config)


def test_faces_take_a_dict_of_config_fields():
    from langgraph.checkpoint.memory import InMemorySaver

    from langgraph_librarian import (
        LibrarianMiddleware,
        create_librarian_graph,
        create_librarian_hook,
        create_librarian_node,
    )

    assert LibrarianMiddleware({"always_include_recent_turns": 3}).config == LibrarianConfig(
        always_include_recent_turns=3
    )
    create_librarian_node({"max_selected": 4})
    create_librarian_hook({"max_selected": 4})
    graph = create_librarian_graph(
        lambda state: {"messages": []}, {"max_selected": 4}, checkpointer=InMemorySaver()
    )
    assert _ask(graph)["librarian_metadata"]["selection_strategy"] == "local"


@pytest.mark.parametrize(
    "build",
    [
        lambda bad: __import__("langgraph_librarian").LibrarianMiddleware(bad),
        lambda bad: __import__("langgraph_librarian").create_librarian_node(bad),
        lambda bad: __import__("langgraph_librarian").create_librarian_hook(bad),
        lambda bad: __import__("langgraph_librarian").create_librarian_graph(lambda s: {}, bad),
    ],
)
def test_faces_reject_a_bad_config_when_built(build):
    with pytest.raises(ValueError, match=r"unknown LibrarianConfig fields.*'recent_turns'"):
        build({"recent_turns": 3})
    with pytest.raises(TypeError, match="must be a LibrarianConfig, a dict"):
        build(["always_include_recent_turns", 3])


def test_embeddings_are_checked_when_the_config_is_built():
    with pytest.raises(ValueError, match="unknown embeddings 'nope'"):
        LibrarianConfig(embeddings="nope")
    with pytest.raises(TypeError, match="embeddings must be"):
        LibrarianConfig(embeddings=42)  # type: ignore[arg-type]
    from langgraph_librarian.embeddings import StaticEmbeddings, resolve_embeddings

    assert isinstance(resolve_embeddings(LibrarianConfig(embeddings="static")), StaticEmbeddings)
    assert resolve_embeddings(LibrarianConfig(embeddings="none")) is None


def test_a_packaged_model_without_its_packages_fails_when_the_config_is_built(monkeypatch):
    import langgraph_librarian.minilm as minilm

    monkeypatch.setattr(minilm, "minilm_available", lambda: False)
    with pytest.raises(ImportError, match="needs the MiniLM weights"):
        LibrarianConfig(embeddings="minilm")
    LibrarianConfig(embeddings="static")  # packaged with the library: always there


def test_background_indexing_without_a_store_says_where_the_store_goes():
    with pytest.raises(
        ValueError, match=r"LibrarianConfig\(store=\.\.\., background_indexing=True\)"
    ):
        LibrarianConfig(background_indexing=True)
