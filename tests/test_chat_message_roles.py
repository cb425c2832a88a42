"""Histories written with ``ChatMessage(role=...)`` or streamed chunks read by role.

The library tells roles by a message's ``type``: ``ChatMessage(role="user")`` is
"chat" and ``HumanMessageChunk`` "HumanMessageChunk", so such a history had no human
message: repaired to nothing, trimmed to nothing, and the Librarian's curated context
empty."""

from __future__ import annotations

from langchain_core.messages import (
    AIMessageChunk,
    ChatMessage,
    HumanMessage,
    HumanMessageChunk,
    SystemMessage,
)

from langgraph_librarian import LibrarianConfig
from langgraph_librarian._engine.history import as_messages, repair_history
from langgraph_librarian.memory import trim_history
from langgraph_librarian.nodes import select_and_hydrate


def chat_history() -> list:
    return [
        ChatMessage(content="Be brief.", role="system", id="s"),
        ChatMessage(content="I'm allergic to peanuts.", role="user", id="u1"),
        ChatMessage(content="Noted.", role="assistant", id="a1"),
        HumanMessageChunk(content="What should I avoid?", id="u2"),
    ]


def test_chat_messages_and_chunks_read_as_their_roles():
    read = as_messages(chat_history())
    assert [m.type for m in read] == ["system", "human", "ai", "human"]
    assert [m.id for m in read] == ["s", "u1", "a1", "u2"]
    assert read[1].content == "I'm allergic to peanuts."
    # an unknown role stays a ChatMessage
    assert as_messages([ChatMessage(content="x", role="critic")])[0].type == "chat"
    # plain histories are returned as they are (the same list items)
    plain = [SystemMessage("s"), HumanMessage("h")]
    assert all(a is b for a, b in zip(as_messages(plain), plain, strict=True))


def test_a_history_of_chat_messages_is_not_repaired_or_trimmed_to_nothing():
    assert [m.type for m in repair_history(chat_history())] == ["system", "human", "ai", "human"]
    trimmed = trim_history(chat_history(), max_tokens=1000)
    assert [m.id for m in trimmed] == ["s", "u1", "a1", "u2"]


def test_the_librarian_curates_a_history_of_chat_messages():
    history = [*chat_history(), AIMessageChunk(content="Peanuts.", id="a2")]
    history.append(ChatMessage(content="And for dinner?", role="user", id="u3"))
    out = select_and_hydrate(
        {"messages": history, "index": []},
        {"configurable": {"librarian": LibrarianConfig(embeddings=None)}},
    )
    curated = out["curated_messages"]
    assert curated and curated[-1].id == "u3"
    assert any(m.type == "human" for m in curated)
