"""A longer message that asks the question again among other news hands its score to
the reply after it, as a message that only repeats the question does; a greeting naming
the same people and day asks nothing again."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from langgraph_librarian import LibrarianConfig
from langgraph_librarian._engine.text import content_terms
from langgraph_librarian.index import update_index
from langgraph_librarian.select import LocalSelector
from langgraph_librarian.select._evidence import asks_again, echoed_sentence, specific_terms


def _select(history: list, question: str) -> list[int]:
    full = [*history, HumanMessage(question, id="q")]
    entries = update_index(full, [], LibrarianConfig(embeddings=None)).entries[:-1]
    return LocalSelector().select(question, full, entries).ids


def _history(asking: str) -> list:
    history = [
        HumanMessage(asking, id="m0"),
        AIMessage("Try 'Circe' by Madeline Miller: gripping, and short chapters.", id="m1"),
    ]
    for n in range(2, 40, 2):
        history.append(HumanMessage(f"I read a book review about flights on day {n}.", id=f"m{n}"))
        history.append(AIMessage(f"Reviews of books about flights are fun {n}.", id=f"m{n + 1}"))
    return history


def test_the_reply_to_a_question_asked_again_among_other_news_is_selected():
    # Over 60 words: no short question, whose reply ranks with it anyway.
    history = _history(
        "The packing is nearly done and the taxi is booked for six in the morning, so "
        "that part is sorted. Any book recommendations for the flight? My sister is "
        "watering the plants while we are away, and the neighbours will take the post in. "
        "The hotel confirmed the late check-in, the car park is prepaid for the whole week "
        "and the insurance documents are printed and in the blue folder with the passports."
    )
    ids = _select(history, "Which book was recommended for my flight?")
    assert 1 in ids
    assert ids.index(1) == ids.index(0) + 1 or ids.index(1) < ids.index(0)


def test_a_greeting_naming_the_same_people_and_day_asks_nothing_again():
    question = "What achievement did John share with Tim in January 2024?"
    terms, names = frozenset(content_terms(question)), specific_terms(question)
    assert names >= {"john", "tim", "2024"}
    assert not echoed_sentence("(2 January 2024) Tim: Hi John, how's it going?", terms, names)
    assert echoed_sentence(
        "You, Jon? What do you have going for your dance studio?",
        frozenset(content_terms("What does Jon's dance studio offer?")),
        specific_terms("What does Jon's dance studio offer?"),
    )


def test_a_reply_restating_the_question_before_answering_it_asks_nothing_again():
    question = "Which laptop did you suggest for video editing?"
    terms, names = frozenset(content_terms(question)), specific_terms(question)
    sentence = "Which laptop should you buy for video editing?"
    answer = (
        f"{sentence} With a 2000 budget and a lot of travel, I'd pick the MacBook Pro 14 "
        "with the M3 Pro chip: it handles 4K timelines smoothly, the battery lasts a full "
        "day away from a socket, and it weighs 1.6 kg, so it fits a carry-on."
    )
    assert echoed_sentence(sentence, terms, names)
    assert not asks_again(answer, sentence, terms, names, assistant=True)
    back = f"Back from the trip, all fine. {sentence}"
    assert asks_again(back, sentence, terms, names, assistant=True)
    assert asks_again(f"{sentence} Thanks!", sentence, terms, names, assistant=True)
    # A user who opens with the question and goes on with other news still asks it.
    assert asks_again(answer, sentence, terms, names)


def test_the_next_topic_after_a_restating_answer_is_not_promoted():
    texts = [
        "I edit 4K video and travel a lot; my budget is about 2000.",
        "Which laptop should you buy for video editing? With a 2000 budget and a lot of "
        "travel, I'd pick the MacBook Pro 14 with the M3 Pro chip: it handles 4K timelines "
        "smoothly, the battery lasts a full day away from a socket, and it weighs 1.6 kg, "
        "so it fits a carry-on. The Dell XPS 15 is a fine alternative if you need Windows, "
        "but its battery is weaker under load and the fans get loud when rendering.",
        "Thanks. Separately, can you draft a polite email to my landlord about the broken "
        "heating in the flat?",
        "Sure: Dear Mr Patel, the heating in the flat has been broken since Monday; could "
        "you arrange a repair this week? Kind regards.",
        "My sister wants a new phone with a good camera, any ideas?",
        "The Pixel 8 has an excellent camera for its price.",
        "The MacBook arrived today; editing the wedding video on it is smooth.",
        "Great to hear it works well for your editing.",
        "The shop also had a Lenovo laptop I tried, but it felt heavy in the bag.",
        "Weight matters if you travel a lot.",
        "My old laptop will go to my nephew for school.",
        "A nice way to reuse it.",
        "We are having pasta for dinner tonight.",
        "Enjoy your dinner.",
    ]
    history = [
        (HumanMessage if i % 2 == 0 else AIMessage)(text, id=f"m{i}")
        for i, text in enumerate(texts)
    ]
    ids = _select(history, "Which laptop did you suggest for video editing?")
    assert ids[0] == 1
    # The landlord email ranks below the messages about laptops that come, if at all. (A
    # question about what the assistant said keeps the user's messages at 0.7: the
    # user's later "Lenovo felt heavy" and "my old laptop" may fall under the cutoff.)
    landlord = ids.index(2) if 2 in ids else len(ids)
    laptops = [ids.index(k) for k in (6, 8, 10) if k in ids]
    assert laptops and all(landlord > at for at in laptops)


def test_a_user_opening_with_the_question_then_other_news_still_asks_it():
    news = (
        " My sister is watering the plants while we are away, and the neighbours will take"
        " the post in. The hotel confirmed the late check-in, the car park is prepaid for"
        " the whole week and the insurance documents are printed and in the blue folder."
    )
    for opening in (
        "Any book recommendations for the flight?",
        "Hi again! Any book recommendations for the flight?",
    ):
        ids = _select(_history(opening + news), "Which book was recommended for my flight?")
        assert 1 in ids, opening
