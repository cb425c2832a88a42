"""What the question asks about, pasted a turn ago, stays whole.

The earlier recent turns get a share of the budget (so that a long one cannot crowd out
the selection) and are given in short form past it. A trial with a meeting-notes
assistant found the notes pasted right before "who owns the refunds...?" given as
their summary while older, weaker matches came whole: the agent could not answer
about the notes it had just been given.
"""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from langgraph_librarian import LibrarianConfig
from langgraph_librarian.hydrate import COMPACT_MARK
from langgraph_librarian.index import update_index
from langgraph_librarian.nodes import select_and_hydrate

FILLER = (
    "We went through the backlog again and agreed to keep the weekly rhythm as it is. "
    "Nothing else changed this week; the dashboards look the same as before. "
)


def _notes() -> str:
    lines = [f"- Item {i}: {FILLER}" for i in range(12)]
    lines.insert(6, "- Refunds for annual Porto subscribers: Anton owns them, due 25 September.")
    return "Notes from today's sync:\n" + "\n".join(lines)


def _history(topic: str = "the refunds queue for Porto subscribers") -> list:
    out: list = []
    for i in range(10):
        out.append(HumanMessage(f"Week {i}: {topic} grew. {FILLER}"))
        out.append(AIMessage(f"Noted for week {i}: {topic} is still open. {FILLER}"))
    out.append(HumanMessage(_notes()))
    out.append(AIMessage("Thanks, I have the notes."))
    for i, message in enumerate(out):
        message.id = f"m{i}"
    return out


def _curated(messages: list, question: str) -> dict:
    messages = [*messages, HumanMessage(question, id="q")]
    config = LibrarianConfig(context_token_budget=1200, embeddings=None)
    entries = update_index(messages, [], config).entries
    state = {"messages": messages, "index": [e.to_dict() for e in entries]}
    out = select_and_hydrate(state, {"configurable": {"librarian": config}})
    return {m.id: m for m in out["curated_messages"]}


def test_notes_the_question_asks_about_stay_whole() -> None:
    question = "Who owns the refunds for annual Porto subscribers, and by when?"
    notes = _curated(_history(), question)["m20"]
    assert not notes.additional_kwargs.get(COMPACT_MARK)
    assert "Anton owns them" in notes.content


def test_a_long_recent_turn_the_question_is_not_about_is_still_shortened() -> None:
    """The selection (older matches on the Lisbon invoices) keeps its room: the notes,
    which share one word with the question, come in short form."""
    messages = _history("the invoices of the Lisbon customers")
    curated = _curated(messages, "What happened to the Lisbon customers' invoices?")
    assert curated["m20"].additional_kwargs.get(COMPACT_MARK)
    assert sum(m.startswith("m") and m != "m20" for m in curated) >= 4
