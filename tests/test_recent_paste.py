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


def _curated(messages: list, question: str, budget: int = 1200, recent_turns: int = 2) -> dict:
    messages = [*messages, HumanMessage(question, id="q")]
    config = LibrarianConfig(
        context_token_budget=budget, always_include_recent_turns=recent_turns, embeddings=None
    )
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


# Found by a review of the change: each failed before its fix.


def test_a_paste_that_barely_mentions_the_question_never_costs_the_best_match() -> None:
    """A release log naming two of the question's five words ("Lisbon", "March") may
    stay whole only while the best older match still fits whole beside it."""
    answer = (
        "Anton said in the March review that the Lisbon invoices were late because the "
        "bank changed the IBAN format; he will resend all of them by 4 April. " + FILLER * 3
    )
    log = "Release log:\n" + "\n".join(
        [f"- step {i}: {FILLER}" for i in range(6)]
        + ["- Lisbon mirror upgraded in March."]
        + [f"- step {i}: {FILLER}" for i in range(6, 12)]
    )
    messages: list = []
    for i in range(8):
        messages.append(HumanMessage(f"Week {i}: planning the offsite and the hiring plan."))
        messages.append(AIMessage(f"Noted for week {i}. {FILLER}"))
    messages[5] = HumanMessage("What happened with the Lisbon invoices? " + FILLER)
    messages[6] = AIMessage(answer)
    messages += [HumanMessage(log), AIMessage("Log received.")]
    for i, message in enumerate(messages):
        message.id = f"m{i}"
    question = "What did Anton say about the Lisbon invoices in March?"
    curated = _curated(messages, question, budget=600)
    assert "m6" in curated and not curated["m6"].additional_kwargs.get(COMPACT_MARK)


def test_one_paste_too_long_for_the_budget_does_not_shorten_the_others() -> None:
    messages = _history("the invoices of the Lisbon customers")
    long_notes = _notes().replace("Notes from today's sync:", "Full log:") + (
        "\n" + "\n".join(f"- Line {i}: {FILLER}" for i in range(120))
    )
    messages += [HumanMessage(long_notes, id="m22"), AIMessage("Got the long log too.", id="m23")]
    question = "Who owns the refunds for annual Porto subscribers, and by when?"
    curated = _curated(messages, question, recent_turns=3)
    assert not curated["m20"].additional_kwargs.get(COMPACT_MARK)
    assert curated["m22"].additional_kwargs.get(COMPACT_MARK)


def test_with_many_recent_turns_the_oldest_give_way_to_the_asked_paste() -> None:
    messages: list = []
    for i in range(12):
        messages.append(HumanMessage(f"Week {i}: the Lisbon invoices again. {FILLER}"))
        messages.append(AIMessage(f"Noted for week {i}. {FILLER}"))
    messages += [HumanMessage(_notes()), AIMessage("Thanks, I have the notes.")]
    for i, message in enumerate(messages):
        message.id = f"m{i}"
    question = "Who owns the refunds for annual Porto subscribers, and by when?"
    curated = _curated(messages, question, recent_turns=12)
    assert not curated["m24"].additional_kwargs.get(COMPACT_MARK)


def test_a_foreign_question_is_matched_without_its_function_words() -> None:
    """Found by a review: "de", "la", "les" of a French question matched unrelated
    French notes pasted a turn ago, which then stayed whole."""
    notes = "Notes de la réunion:\n" + "\n".join(
        f"- Point {i}: la mise à jour des écrans de la salle et les horaires de la "
        f"semaine pour les équipes, {FILLER}"
        for i in range(8)
    )
    messages = _history("the refunds queue for Porto subscribers")
    messages[20] = HumanMessage(notes, id="m20")
    question = "Qui s'occupe de la file des remboursements pour les abonnés de Porto ?"
    curated = _curated(messages, question)
    assert curated["m20"].additional_kwargs.get(COMPACT_MARK)
