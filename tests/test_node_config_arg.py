"""A Librarian config passed where the run config goes is read as one (a natural first
try); anything else that is not a mapping is a clear TypeError."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langgraph_librarian import LibrarianConfig, aselect_and_hydrate, select_and_hydrate
from langgraph_librarian.index import update_index


def _state() -> dict:
    history = [
        HumanMessage("The offsite budget is 12,000 dollars.", id="a"),
        AIMessage("Noted.", id="b"),
        HumanMessage("Unrelated: the plants need water.", id="c"),
        AIMessage("Sure.", id="d"),
    ]
    entries = update_index(history, [], LibrarianConfig()).entries
    return {
        "messages": [*history, HumanMessage("What is the offsite budget?", id="q")],
        "index": [e.to_dict() for e in entries],
    }


def test_a_librarian_config_in_place_of_the_run_config():
    config = LibrarianConfig(context_token_budget=None, always_include_recent_turns=1)
    wrapped = {"configurable": {"librarian": config}}
    expected = select_and_hydrate(_state(), wrapped)["selected_ids"]
    assert select_and_hydrate(_state(), config)["selected_ids"] == expected
    assert select_and_hydrate.invoke(_state(), config)["selected_ids"] == expected
    assert asyncio.run(select_and_hydrate.ainvoke(_state(), config))["selected_ids"] == expected
    assert asyncio.run(aselect_and_hydrate(_state(), config))["selected_ids"] == expected
    # The config is the one in force, not the default.
    meta = select_and_hydrate(_state(), config)["librarian_metadata"]
    assert meta["context_budget"] is None


def test_any_other_config_is_a_clear_type_error():
    with pytest.raises(TypeError, match="RunnableConfig"):
        select_and_hydrate(_state(), "librarian")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="RunnableConfig"):
        select_and_hydrate.invoke(_state(), 3)  # type: ignore[arg-type]


def test_every_way_of_calling_a_node_takes_a_librarian_config():
    from langgraph_librarian.middleware import create_librarian_hook

    config = LibrarianConfig(context_token_budget=None, always_include_recent_turns=1)
    expected = select_and_hydrate(_state(), {"configurable": {"librarian": config}})
    ids = expected["selected_ids"]
    assert [u["selected_ids"] for u in select_and_hydrate.stream(_state(), config)] == [ids]
    assert [u["selected_ids"] for u in select_and_hydrate.batch([_state()], config)] == [ids]
    assert [u["selected_ids"] for u in select_and_hydrate.batch([_state()], [config])] == [ids]

    async def both() -> tuple[list, list]:
        streamed = [u async for u in select_and_hydrate.astream(_state(), config)]
        return streamed, await select_and_hydrate.abatch([_state()], config)

    streamed, batched = asyncio.run(both())
    assert [u["selected_ids"] for u in streamed] == [u["selected_ids"] for u in batched] == [ids]
    # The pre_model_hook: a config in place is read, a wrong one raises (not absorbed).
    hook = create_librarian_hook()
    out = hook(_state(), config)["llm_input_messages"]  # type: ignore[arg-type]
    assert [m.id for m in out] == [m.id for m in expected["curated_messages"]]
    with pytest.raises(TypeError, match="RunnableConfig"):
        hook(_state(), "librarian")  # type: ignore[arg-type]
