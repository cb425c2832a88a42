"""What counts as evidence for a query, apart from how well it matches.

Ranking orders messages by how well they match; this module says which of them can
carry evidence at all, and how far above chance a match stands:

- **Echoes are not answers.** An earlier message that asks what the query asks (the
  same question, in another thread or turn) matches best and says nothing.
- **Filler carries nothing on its own.** "Noted.", "Sounds good!", "Reply 8." match
  nothing and hold no fact; they travel only as part of an exchange.
- **Repeats appear once.** The same text sent twice is one piece of evidence.
- **Chance level.** Cosine similarity has no fixed scale: every model and every query
  has its own level for an unrelated sentence. The query is compared with a fixed set
  of everyday lines on unrelated topics (``_data/background.txt``); a message's
  evidence is how many standard deviations its best passage stands above that level
  (a z-score). A query word that is rare in English (not among the few thousand most
  frequent words of BERT's vocabulary, which lists words by frequency) shared with the
  message is evidence too. Scoped recall uses this as its floor: when nothing reaches
  it, recall is empty rather than the nearest records.
"""

from __future__ import annotations

import gzip
import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from statistics import NormalDist

import numpy as np
from langchain_core.embeddings import Embeddings

from langgraph_librarian._engine.text import (
    DAYS,
    MONTHS,
    WHITESPACE,
    content_terms,
    has_more_tokens_than,
    memo_short_texts,
    stem_terms,
    tokenize,
)
from langgraph_librarian._engine.vectors import dot_rows, unit_rows

__all__ = [
    "EVIDENCE_FLOOR",
    "LEXICAL_EVIDENCE",
    "Evidence",
    "answers_question",
    "asks_again",
    "asks_question",
    "background_vectors",
    "chance_level",
    "corroborates",
    "echoed_sentence",
    "ends_asking",
    "informative_terms",
    "is_echo",
    "is_filler",
    "is_non_answer",
    "rare_terms",
    "repeat_key",
    "scope_floor",
    "shares_evidence",
    "specific_terms",
]

EVIDENCE_FLOOR = 1.5
"""Standard deviations above chance a message must reach to bear on a query."""
_ABOVE_TYPICAL_MAX = 0.5
"""How far above the largest chance score among n records the best must stand."""
_TAIL_SPREAD = 1.1
"""The chance maximum of n records is taken this much wider than n standard normal
draws give: a scope's generic lines ("Thanks, keep working hard!") resemble any
question a little, so its best chance score grows faster with n than the normal model
says. A handful of records keeps the floor of :data:`EVIDENCE_FLOOR`."""
LEXICAL_EVIDENCE = 2.0
"""Evidence credited to a message sharing a rare query word (above the floor)."""
_COMMON_WORDS = 3000
"""Words among this many most frequent English words are not evidence by themselves."""
_FIRST_WORD = 1996
"""Id of "the" in BERT's uncased vocabulary: from here on words are in frequency order."""
_DATA = Path(__file__).resolve().parent / "_data" / "background.txt"
_MODEL_DATA = Path(__file__).resolve().parent.parent / "_engine" / "model_data"
_VOCABULARY = _MODEL_DATA / "minilm-vocab.txt.gz"

_FILLER_WORDS = frozenset(
    [
        "ok",
        "okay",
        "k",
        "sure",
        "thanks",
        "thank",
        "thx",
        "ty",
        "noted",
        "great",
        "good",
        "nice",
        "cool",
        "awesome",
        "perfect",
        "fine",
        "yes",
        "yeah",
        "yep",
        "yup",
        "no",
        "nope",
        "right",
        "alright",
        "got",
        "it",
        "will",
        "do",
        "done",
        "reply",
        "replied",
        "welcome",
        "sounds",
        "sound",
        "lovely",
        "wonderful",
        "excellent",
        "brilliant",
        "agreed",
        "agree",
        "understood",
        "choice",
        "idea",
        "hmm",
        "hm",
        "oh",
        "ah",
        "wow",
        "haha",
        "lol",
        "indeed",
        "exactly",
        "absolutely",
        "definitely",
        "appreciate",
        "appreciated",
        "cheers",
        "bye",
        "goodbye",
        "hi",
        "hello",
        "hey",
        # The small words of acknowledgements and greetings ("Okay, let me think about
        # it.", "Thanks, that helps!", "Good morning!", "No problem at all."): a message
        # made only of these (and the words above) says nothing a question could need.
        "let",
        "me",
        "think",
        "about",
        "that",
        "this",
        "helps",
        "helped",
        "help",
        "morning",
        "evening",
        "afternoon",
        "night",
        "lot",
        "much",
        "so",
        "very",
        "really",
        "too",
        "a",
        "to",
        "there",
        "makes",
        "sense",
        "see",
        "i",
        "you",
        "problem",
        "at",
        "all",
        "of",
        "course",
        "again",
        "for",
        "your",
        # Sign-offs ("Lovely chat, cheers.", "Talk soon!", "Take care, catch you later.").
        "chat",
        "chatting",
        "talk",
        "talking",
        "soon",
        "later",
        "take",
        "care",
        "catch",
        "speak",
        "bye-bye",
        # Agreement and well-wishing formulae ("That works.", "Good luck!", "No worries,
        # my pleasure.", "Fair enough.", "Same here.", "Have fun!", "Glad to hear it.").
        "works",
        "luck",
        "best",
        "wishes",
        "congrats",
        "congratulations",
        "worries",
        "worry",
        "np",
        "my",
        "pleasure",
        "anytime",
        "fair",
        "enough",
        "same",
        "here",
        "have",
        "fun",
        "enjoy",
        "glad",
        "hear",
        "happy",
        "wish",
        "well",
    ]
)
_FILLER_MAX_WORDS = 6
_QUESTION_START = re.compile(
    r"^\s*(?:what|which|who|whom|whose|when|where|why|how|is|are|am|was|were|do|does|did|"
    r"can|could|should|would|will|shall|may|might|have|has|had)\b",
    re.IGNORECASE,
)
_ECHO_COVERAGE = 0.6
"""Share of the query's terms an earlier question must repeat to be its echo."""
_ECHO_EXTRA = 0.4
"""At most this share of the earlier question's terms may be new."""


def scope_floor(records: int) -> float:
    """What the best of ``records`` records must reach for any of them to bear on a query.

    Among many records that have nothing to do with a question, the best one still
    scores high by chance: the expected largest of ``n`` draws of a standard normal
    (Blom's approximation), about 1.3 for 6 records and 3.0 for 400, taken 10% wider
    (:data:`_TAIL_SPREAD`). Evidence must stand half a standard deviation above that,
    and never below :data:`EVIDENCE_FLOOR`: 1.5 for a handful of records, about 3.0 for
    50, 3.75 for 400. A record sharing words of the question does not need to
    (:attr:`Evidence.strong`, :attr:`Evidence.corroborated`).
    """
    if records <= 1:
        return EVIDENCE_FLOOR
    typical_max = NormalDist().inv_cdf((records - 0.375) / (records + 0.25))
    return max(EVIDENCE_FLOOR, _TAIL_SPREAD * typical_max + _ABOVE_TYPICAL_MAX)


@dataclass
class Evidence:
    """What each message of a history can prove for one query.

    Attributes:
        semantic: Best-passage cosine in standard deviations above chance (zeros
            without an embedding model).
        lexical: Shares a rare query word, or all of a short query's words.
        usable: ``False`` for echoes of the query and filler, which prove nothing.
        strong: Shares every content word of the query, or two of its rare words:
            enough to bear on it in a scope of any size.
        measured: Whether ``semantic`` was measured (an embedding model was used).
        corroborated: Shares words of the query that corroborate each other (a rare one
            and another, or most of them: :func:`corroborates`): enough to bear on it in
            a scope of any size, like :attr:`strong`. Measured by the local selector in
            the same pass as :attr:`lexical`; ``None`` when not measured.
    """

    semantic: np.ndarray
    lexical: np.ndarray
    usable: np.ndarray
    strong: np.ndarray
    measured: bool = False
    corroborated: np.ndarray | None = None

    def scores(self) -> np.ndarray:
        """One score per message: semantic, at least :data:`LEXICAL_EVIDENCE` when it
        shares a rare word; ``-inf`` when it cannot be evidence."""
        combined = np.where(
            self.lexical, np.maximum(self.semantic, LEXICAL_EVIDENCE), self.semantic
        )
        return np.where(self.usable, combined, -np.inf)

    def best(self) -> float:
        """The best usable score (0.0 when nothing is usable)."""
        scores = self.scores()
        top = float(scores.max()) if scores.size else float("-inf")
        return top if np.isfinite(top) else 0.0

    def floor(self) -> float:
        """The semantic score the best usable message must reach (see :func:`scope_floor`)."""
        return scope_floor(int(self.usable.sum()))

    def bears(self) -> bool:
        """Whether anything here bears on the query.

        The best usable score must reach what the best of this many unrelated messages
        reaches by chance (:func:`scope_floor`): among a few messages one shared rare
        word (worth :data:`LEXICAL_EVIDENCE`) is enough; among hundreds, some word of any
        question turns up by chance, and it takes the meaning, or one message with every
        content word of the question or two of its rare words (:attr:`strong`).
        """
        if not self.usable.any():
            return False
        if not self.measured:
            # Without embeddings nothing tells a chance match from a real one: a shared
            # rare word is the best evidence there is.
            return bool((self.lexical & self.usable).any())
        lexical = self.strong if self.corroborated is None else self.strong | self.corroborated
        return self.best() >= self.floor() or bool((lexical & self.usable).any())


def _lines() -> list[str]:
    text = _DATA.read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and line[0] != "#"]


_CHANCE: dict[str, np.ndarray] = {}
_CHANCE_LOCK = threading.Lock()


def background_vectors(embeddings: Embeddings, model: str) -> np.ndarray:
    """Unit vectors of the unrelated everyday lines by ``model`` (embedded once)."""
    with _CHANCE_LOCK:
        matrix = _CHANCE.get(model)
        if matrix is None:
            lines = _lines()
            matrix = _CHANCE[model] = unit_rows(embeddings.embed_documents(lines), len(lines))
        return matrix


def chance_level(embeddings: Embeddings, model: str, query_unit: np.ndarray) -> tuple[float, float]:
    """(mean, standard deviation) of the query's cosine with unrelated everyday lines."""
    matrix = background_vectors(embeddings, model)
    if matrix.shape[1] != query_unit.shape[0]:
        return 0.0, 1.0
    sims = dot_rows(matrix, query_unit)
    return float(sims.mean()), max(float(sims.std()), 1e-3)


@lru_cache(maxsize=1)
def _common_stems() -> frozenset[str]:
    with gzip.open(_VOCABULARY, "rt", encoding="utf-8") as handle:
        words = [line.strip() for line in handle]
    top = [w for w in words[_FIRST_WORD : _FIRST_WORD + _COMMON_WORDS] if w.isalpha()]
    return frozenset(stem_terms(top))


def rare_terms(terms: frozenset[str]) -> frozenset[str]:
    """The ``terms`` (stems) that are not among the most common English words, nor numbers."""
    common = _common_stems()
    return frozenset(t for t in terms if t not in common and not t.isdigit())


def informative_terms(query: str) -> frozenset[str]:
    """The query's content terms (stemmed) that are not among the most common words."""
    return rare_terms(frozenset(content_terms(query)))


def shares_evidence(
    shared: frozenset[str], query_terms: frozenset[str], rare: frozenset[str]
) -> bool:
    """Whether the query terms a message shares (``shared``) make it evidence alone.

    A rare word does; so does every term of the query ("cat" for "Owns a cat."), or
    at least two terms that make half of a longer query. One common word ("problem",
    "week") shared with a long question does not.
    """
    if not shared:
        return False
    return bool(shared & rare) or shared == query_terms or 2 <= len(shared) >= len(query_terms) / 2


def corroborates(
    shared: frozenset[str], rare: frozenset[str], query_terms: frozenset[str] = frozenset()
) -> bool:
    """Whether the query terms a message shares (``shared``) corroborate each other: a
    rare query word and another of its content words ("married" and "greenhouse"),
    two thirds of the question's content words, at least two ("theme" and "party" of
    "What theme did we pick for the party?"), or three making half of them ("John",
    "first", "dance" of "What was the setting for John and his wife's first dance?").
    Words of a question do not meet like that by chance in a chat. Two thirds of a
    question that names something rare do not count without it (two common words such
    as "decide" and "keep" meet in any long reply); three words making half still do."""
    if len(shared) < 2:
        return False
    if shared & rare:
        return True
    if not query_terms:
        return False
    three = len(shared) >= 3 and 2 * len(shared) >= len(query_terms)
    if query_terms & rare:
        # Two common words of a question that names something rare ("decide" and
        # "keep" of "What did I decide about keeping chickens?") meet in long replies
        # about anything else; three of its words making half still corroborate.
        return three
    return three or 3 * len(shared) >= 2 * len(query_terms)


_NON_ANSWER = re.compile(
    r"^(?:(?:sorry|honestly|hmm+|um+|well|oh|unfortunately|sadly)\W+)*"
    r"(?:i\s*(?:'m|am)\s+(?:not|un)\s*(?:sure|certain)"
    r"|i\s+(?:really\s+)?(?:do\s*n'?o?t|can\s*'?n?o?t|cannot|couldn'?t)\s+"
    r"(?:know|tell|say|remember|recall)"
    r"|i\s+(?:have|'ve\s+got)\s+no\s+(?:idea|clue)|no\s+idea|no\s+clue|not\s+sure"
    r"|i\s+(?:do\s*n'?o?t)\s+have\s+(?:that|this|this\s+kind\s+of)\s+information)"
    r"(?:\s+(?:that|this|it|for\s+sure|offhand))?"
    r"(?:\W+(?:sorry|i'?m\s+afraid))?\W*$"
)
"""A reply that only says its writer does not know: "I don't know.", "I'm not sure,
sorry!", "I can't remember that.", "No idea.". Written as one closed form (subject, a
negated verb of knowing, at most "that"/"it"): a reply with anything more ("Not that I
know of.", "I don't recall any.", "We don't know yet.", "I didn't say it.") may be the
answer, and stays evidence."""


def is_non_answer(text: str) -> bool:
    """A short reply that only says its writer does not know (:data:`_NON_ANSWER`): it
    answers nothing, whatever it replies to."""
    if len(text) > 80:
        return False
    normal = WHITESPACE.sub(" ", text.strip().lower().replace("\u2019", "'"))
    return bool(_NON_ANSWER.match(normal))


def is_filler(text: str) -> bool:
    """A short message of acknowledgements only ("Noted, thanks.", "Reply 8."), or one
    that only says its writer does not know (:func:`is_non_answer`)."""
    if len(text) > 80 and has_more_tokens_than(text, _FILLER_MAX_WORDS):
        # What the lines below return for a long text of many words (is_non_answer is
        # false past 80 characters), without tokenizing a whole message: indexing asks
        # this of every message, most of them long.
        return False
    words = tokenize(text)
    if not words or len(words) > _FILLER_MAX_WORDS:
        return not words or is_non_answer(text)
    # A number alone with a filler word ("Reply 8.") says nothing; in a longer line it
    # may be the point ("See you at 5.").
    return all(
        w in _FILLER_WORDS or (w.isdigit() and len(words) <= 2) for w in words
    ) or is_non_answer(text)


def is_question(text: str) -> bool:
    """A question or a request for information, by its punctuation or first word."""
    stripped = text.strip()
    return stripped.endswith("?") or "? " in stripped or bool(_QUESTION_START.match(stripped))


_CLOSERS = "\"')]\u201d\u2019"
"""Marks that may follow a sentence's question mark (quotes, brackets)."""
_ASKS = re.compile(r"\?[" + re.escape(_CLOSERS) + r"]*(?:\s|$)")
"""A sentence ending in a question mark, anywhere in a message."""
_BARE_ANSWER_WORDS = 6
"""A reply this short to a question is its answer, however bare ("4", "yes", "grey")."""
_BARE_ANSWER_CHARS = 200
_YES_NO = frozenset(["yes", "yeah", "yep", "yup", "no", "nope"])
"""Filler words that answer a yes/no question."""


def ends_asking(text: str) -> bool:
    """Whether the last sentence of ``text`` is a question."""
    return text.rstrip(" \t\n" + _CLOSERS).endswith("?")


def asks_question(text: str) -> bool:
    """Whether a message of any length asks something: a sentence of it ends in a
    question mark (a long reply may ask "slate grey or mustard?" before its closing
    advice), or it opens as a question does."""
    return bool(_ASKS.search(text)) or is_question(text)


_NO_ANSWER_WORDS = frozenset(
    ["brb", "idk", "dunno", "nvm", "nevermind", "huh", "gtg", "omg", "sec", "hmm", "hm"]
)
"""Chat shorthand that answers no question ("brb", "idk", "one sec")."""


def answers_question(reply: str, asked: str) -> bool:
    """Whether ``reply`` is a bare answer to a question ``asked`` puts: a few words at
    most ("4", "yes", "No.", "grey"), after a message that asks something.

    Such a reply is filler on its own (:func:`is_filler`: "yes" says nothing without
    its question) but is the evidence of its exchange ("three or four sessions a
    week?" / "4"). Acknowledgements ("Thanks!", "Reply 8.") and a reply saying its
    writer does not know answer nothing. The caller checks that the two come from
    different speakers.
    """
    if len(reply) > _BARE_ANSWER_CHARS:  # a long reply is no bare answer: not tokenized
        return False
    words = tokenize(reply)
    if not words or len(words) > _BARE_ANSWER_WORDS or is_non_answer(reply):
        return False
    # A question back ("what?", "Anyway, how is the weather?") or chat shorthand that
    # answers nothing ("brb", "idk", "one sec") is no answer either.
    if reply.rstrip().endswith("?") or _NO_ANSWER_WORDS.intersection(words):
        return False
    # Acknowledgements answer nothing ("Thanks!", "Noted.", "Reply 8."); a yes or a
    # no does, and so does a number alone.
    lone_number = len(words) == 1 and words[0].isdigit()
    if not lone_number and all(
        (w in _FILLER_WORDS and w not in _YES_NO) or w.isdigit() for w in words
    ):
        return False
    return asks_question(asked)


def is_echo(text: str, query_terms: frozenset[str], ignored: frozenset[str] = frozenset()) -> bool:
    """An earlier question asking what the query asks (it matches, it answers nothing).

    ``ignored`` terms count on neither side (see :func:`echoed_sentence`).
    """
    if not query_terms or len(text) > 600 or not is_question(text):
        return False
    terms = frozenset(content_terms(text)) - ignored
    if not terms:
        return False
    shared = len(terms & query_terms)
    return shared >= _ECHO_COVERAGE * len(query_terms) and len(
        terms - query_terms
    ) <= _ECHO_EXTRA * len(terms)


_CAPITALIZED = re.compile(r"(?<![\w'])[A-Z][\w'-]*")


def specific_terms(query: str) -> frozenset[str]:
    """Terms of the query's names, numbers and dates (capitalized words inside a
    sentence, digits, month and weekday names): what a greeting shares with any
    question about the same people and day."""
    start = len(query) - len(query.lstrip())
    named = " ".join(m.group() for m in _CAPITALIZED.finditer(query) if m.start() > start)
    return frozenset(content_terms(named)) | frozenset(
        t for t in content_terms(query) if t[0].isdigit() or t in _DATE_TERMS
    )


def echoed_sentence(passage: str, query_terms: frozenset[str], names: frozenset[str]) -> bool:
    """Whether ``passage`` (one sentence of a longer message) asks what the query asks,
    by the words beyond the names, numbers and dates both hold: "You, Jon? What do you
    have going for your dance studio?" echoes "What does Jon's dance studio offer?";
    "(2 January 2024) Tim: Hi John, how's it going?" echoes no question about John, Tim
    and January 2024."""
    plain = query_terms - names
    return bool(plain) and is_echo(passage, plain, names | _numbers(passage))


_ANSWERED_AFTER = 20
"""Words after a question opening a message past which the message answers it."""


def asks_again(
    message: str,
    sentence: str,
    query_terms: frozenset[str],
    names: frozenset[str],
    *,
    assistant: bool = False,
) -> bool:
    """Whether ``message`` asks the query again in ``sentence`` (one of its passages; see
    :func:`echoed_sentence`) among other news. An ``assistant`` message that opens with
    the question and goes on past a few words answers it instead ("Which laptop should
    you buy for video editing? With a 2000 budget, I'd pick the MacBook...": a reply
    restating what it answers, a heading), and its reply is the next topic; a user who
    opens with the question and then tells other news still asks it."""
    if not echoed_sentence(sentence, query_terms, names):
        return False
    if not assistant:
        return True
    at = message.find(sentence)
    if at < 0 or message[:at].strip():
        return True  # after other news (or not found as written: the passage decides)
    return not has_more_tokens_than(message[at + len(sentence) :], _ANSWERED_AFTER)


_DATE_TERMS = frozenset(t for name in (*MONTHS, *DAYS) for t in content_terms(name))


@memo_short_texts(2048)  # the best matches' sentences are read again every turn
def _numbers(text: str) -> frozenset[str]:
    """The terms of ``text`` that open with a digit (its numbers and dates)."""
    return frozenset(t for t in content_terms(text) if t[0].isdigit())


@memo_short_texts(2048)
def repeat_key(text: str) -> str:
    """Texts with the same key are repeats of one another (case and spacing aside)."""
    # Runs of white space as one space, none at the ends: what ``WHITESPACE.sub`` on the
    # stripped text gives (``str.split`` and ``\s`` take the same characters for white
    # space), about four times faster on a message of a few hundred characters.
    return " ".join(text.lower().split())
