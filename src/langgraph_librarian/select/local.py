"""The offline selector: hybrid lexical + embedding ranking with dependency expansion."""

from __future__ import annotations

import logging
import math
import re
import threading
from bisect import bisect_left
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from itertools import chain, islice, pairwise, zip_longest
from operator import attrgetter, is_
from typing import TypeVar

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig

from langgraph_librarian._engine.failures import (
    describe,
    embedding_answered,
    embedding_failed,
    embeddings_down,
    fails_open,
)
from langgraph_librarian._engine.messages import message_text, tool_calls_of
from langgraph_librarian._engine.static import STATIC_MODEL_ID, english_words
from langgraph_librarian._engine.text import (
    DAYS,
    MONTHS,
    content_terms,
    edits1,
    memo_short_texts,
    split_sentences,
    stem_terms,
    tokenize,
    without_foreign_function_words,
)
from langgraph_librarian._engine.vectors import dot_rows
from langgraph_librarian._engine.view import same_prefix, view_of
from langgraph_librarian.embeddings import embedding_model_id, load_embeddings
from langgraph_librarian.entry import IndexEntry
from langgraph_librarian.select._calendar import day_spans, days_apart, month_names, month_of
from langgraph_librarian.select._evidence import (
    Evidence,
    answers_question,
    asks_again,
    background_vectors,
    chance_level,
    corroborates,
    ends_asking,
    informative_terms,
    is_echo,
    is_question,
    rare_terms,
    repeat_key,
    shares_evidence,
    specific_terms,
)
from langgraph_librarian.select._related import (
    initialisms,
    learn_words,
    names_by_role,
    related_words,
    written_as_name,
    written_in_lower_case,
)
from langgraph_librarian.select.lexical import (
    MAY_MONTH,
    WHEN_QUESTION,
    WHEN_SAID,
    BM25Index,
    IndexHead,
    dateline_match,
    opens_with_date,
    without_dateline,
    without_stamp,
)
from langgraph_librarian.select.result import Selection

__all__ = ["LocalSelector"]

logger = logging.getLogger("langgraph_librarian")
_T = TypeVar("_T")

_MAX_NAMED_PASSAGES = 6
"""A rare word links a matched passage to the later changes naming it only when at most
this many passages hold it (a name the conversation keeps using links nothing)."""
RELATIVE_CUTOFF = 0.35
"""Keep candidates scoring at least this share of the best one."""
_RESERVE_CUTOFF = 0.2
"""Reserve candidates (for an unused budget) score at least this share of the best one."""
_RESERVE_TOKENS = 40
"""The reserve holds :attr:`LocalSelector.max_selected` candidates, or more while they
come to less than this many tokens each on average: its cap is meant as an amount of
text, and a chat of short lines (ten words a message) filled the count with a third of
what a chat of ordinary messages gives."""
_SPARE_CUTOFF = 0.05
"""Spare candidates (past the reserve, for a context far below its budget: see
:attr:`~langgraph_librarian.select.Selection.spare_ids`) score at least this share."""
_SPARE_FACTOR = 4
"""At most this many times ``max_selected`` spare candidates."""
_SUMMARY_EMBEDDED_TOKENS = 250
"""Messages longer than this (about 1,000 characters) are embedded by their summary."""
_LONG_SEMANTIC_FACTOR = 0.5
"""Semantic weight kept for such messages."""
_MIN_SEMANTIC_SPREAD = 0.2
"""Cosine similarity above the median that earns full semantic weight."""
_EXPANSION_POOL = 60
"""How many top-ranked candidates dependency expansion looks at."""
_SHORT_MESSAGE_WORDS = 60
"""A selected message this short brings its exchange (the message it answers, the answer
to a question it asks or that it prompts) at :data:`_NEIGHBOUR_FACTOR` of its score. A
longer one keeps its exchange by structure only (an assistant reply brings the user
message it answers, a question it asks its bare answer), after the rest of the selection."""
_NEIGHBOUR_FACTOR = 0.5
_SPEAKER_TYPES = frozenset(["human", "ai"])
_EXCHANGE_SEEDS = 3
"""A long message among this many best matches keeps its exchange by structure."""
_FLOW_SEEDS = 5
"""The best matches whose speaker's next messages may fill the room a context leaves
unused (:meth:`LocalSelector._flow`)."""
_FLOW_REACH = 4
"""How far after a best match its speaker's next messages are looked for."""
_FLOW_BACK = 2
"""How far before a best match its speaker's previous lines are looked for: the line
before a burst's, or the one the other's short question or reaction follows ("I started
rowing again with my club." / "Which canal?" / "Karl-Heine-Kanal...")."""
_GAP_SEEDS = 12
"""Best-ranked messages whose neighbours a few lines away are read for one story."""
_GAP_LINES = 6
"""Two of them at most this many lines apart tell one story: the lines between come."""
_REACTION_WORDS = 20
"""Another speaker's message this long or shorter between is a reaction ("No way! Show
me!"); a longer one takes the floor, and the best match's speaker's later lines answer
it rather than go on."""
_GROUP_SPEAKERS = 3
"""A chat whose latest messages come from this many speakers or more is a group's."""
_GROUP_REPLIES = 6
"""In a group's chat, a short match brings at most this many replies after it."""
_STYLE_SAMPLE = 200
"""The latest entries that tell a group's chat (:func:`_group_chat`): a constant cost a
turn."""
_BURST_LINES = 2
"""A short match brings at most this many lines of its speaker's burst on each side (and
a reply this many of the burst before the line it answers)."""
_BURST_WORDS = 60
"""...of this many words in all: a burst is short lines typed in a row."""
_CHOICE_GAP = 4
"""A choice among offered results is the next user message with at most this many
messages between (the rest of the offering turn: the call, its results, the closing)."""
_CHOICE_WORDS = 12
_OFFER_CHARS = 8000
"""An assistant message's options are looked for in its first this many characters."""
_POINTS_BACK = re.compile(
    r"\b(?:(?:the|that|this)\s+(?:[\w'-]+\s+){0,2}ones?|first|second|third|fourth|fifth"
    r"|last|latter|former|it|them|that|those|these|this)\b",
    re.IGNORECASE,
)
"""A reference back to something offered: "the second one", "the Wednesday one", "that
one", an ordinal, a demonstrative or object pronoun ("book it", "take those")."""
_REQUEST = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|so|hey|hi|now|also|and|then|right|please|pls)\b[\s,!.:-]*)*"
    r"(?:add|fix|write|make|create|show|explain|help|give|change|update|refactor|rename|"
    r"implement|generate|draft|convert|check|review|debug|suggest|recommend|summari[sz]e|"
    r"translate|remove|delete|set\s+up|install|configure|optimi[sz]e|rewrite|port|migrate)"
    r"\b|\b(?:can|could|would)\s+you\s+(?:please\s+)?(?!believe|imagine|guess)\w+|"
    r"\bhelp\s+me\b|"
    r"\bhow\s+(?:do|can|should)\s+(?:i|we)\b",
    re.IGNORECASE,
)
"""A user's request to the assistant, not only a question: "add a /health endpoint",
"can you make the retry configurable", "how do we make it deterministic" (not "can you
believe it?", which asks for nothing). The answer is the assistant's reply."""


@lru_cache(maxsize=2048)
def _requests(opening: str) -> bool:
    """Whether ``opening`` (a message's first :data:`_SHORT_QUESTION_CHARS` characters)
    makes a request (:data:`_REQUEST`). Memoized: the best matches are read again every
    turn, and the pattern costs some 25 µs on a message of a few hundred characters."""
    return bool(_REQUEST.search(without_stamp(opening)))


_SLOT_DICT_MAX = 4096
"""Candidates up to which a selection finds an entry's slot through a dict."""
_FOLLOW_UP_WORDS = 15
"""A follow-up question this short asks more about the same request."""
_PASTE_LINES = 8
"""Line breaks that make a message pasted material (a trace, a log, a config)."""


@memo_short_texts(4096)  # the best matches and the lines around them, read every turn
def _word_count(text: str) -> int:
    """``len(text.split())``: the words of a message, as the structure rules count them."""
    return len(text.split())


def _pastes(text: str) -> bool:
    """Whether ``text`` is pasted material (a code fence, or eight line breaks and more):
    the user shares it to be read, and the assistant's reply reads it. Counted, not
    matched: the pattern it replaces (a fence, or eight runs of a line break and what
    follows it) took some 15 us on a message of a few hundred characters."""
    return "```" in text or text.count("\n") >= _PASTE_LINES


_LISTED_ITEM = re.compile(r"^[ \t]*(?:[-*\u2022]|\d+[.)])[ \t]+\S", re.MULTILINE)
"""A line of an enumerated list (options an assistant message offers). Spaces and tabs
only before the mark: any white space there also ran through blank lines, quadratic on
a long run of them (a reply of 30,000 newlines took 6.6 s)."""
_ANSWER_FACTOR = 0.7
"""The reply to a short question among the best matches ranks at this share of its score."""
_SHORT_QUESTION_CHARS = 600
"""Longer than this, a message is no short question (its words are not even counted)."""
_RESTATED_SEEDS = 20
"""Best matches read for an assistant reply standing for the user's statement before it."""
_RESTATED_FACTOR = 0.6
"""Such a reply keeps this share of its score; the statement takes the whole. (0.5 and
0.7 did as well within a question or two on the blind sets: a reply that holds an answer
of its own as well keeps most of its place.)"""
_RECOMMENDED = re.compile(r"\b(?:recommend|suggest|advis|propos)(?:ed|ions?)\b", re.IGNORECASE)
"""A question about what was recommended, passive or as a noun ("Which book was
recommended for the flight?"): the assistant's words are the answer."""
_REACTION_RATIO = 1.5
"""A reply reacts to the user message before it when the words they share weigh this many
times what it shares on average with the user's messages around (idf-weighted)."""
_REACTION_OTHERS = (-3, -5, 1, 3)
"""Where those messages are, from the reply (two and four messages before its prompt,
one and three after the reply): the user's other messages of the same stretch."""
_LINK_FACTOR = 0.95
"""An earlier statement a selected change refers to ranks just below the change."""
_EARLIER_PER_CHANGE = 2
"""Earlier statements of its author linked to one selected change: a change of a price in
a bakery chat shared "price" and "cost" with ten earlier messages, all ranked above the
second-best match, which held the answer (blind assistant chats, 2026-12-06)."""
_SUPERSEDE_FACTOR = 1.02
"""A later change ranks just above the statement it changes (the latest value wins)."""
_LINK_ROUNDS = 3
_BRIDGE_SEEDS = 3
"""Top matches whose names may bridge to other messages."""
_VOICE_SEEDS = 6
"""Best matches whose reply by the speaker a transcript question names is read."""
_BRIDGE_FACTOR = 0.8
"""A bridged message ranks at most this share of the top match's score..."""
_BRIDGE_BOTH = 0.2
"""...unless it also matches the question on its own: then it gains this share of the
smaller of its two scores over the larger."""
_BRIDGE_MIN_DF, _BRIDGE_DF_SHARE = 5, 0.003
"""A bridging name occurs in at most max(5, 0.3% of passages) passages."""


def _rare_df(index: IndexHead) -> int:
    """The most passages a word may occur in and still single out a thing (a name to
    bridge by, a value a later message retires): max(5, 0.3% of the passages)."""
    return max(_BRIDGE_MIN_DF, int(_BRIDGE_DF_SHARE * index.passage_count))


_NAME = re.compile(r"\b[A-Z][a-zà-ÿ]+(?:[- ][A-Z][a-zà-ÿ]+)*")
_CODE = re.compile(r"\b[A-Z]{1,5}-?\d{3,}[A-Z0-9]*\b")
"""An identifier (order ORD-86663, flight VK6207): it bridges like a name."""
_VERSION = re.compile(r"(?<![\w.])v?(\d+(?:\.\d+){2,})(?!\w|\.\w)")
"""A release number (5.0.0, 2.14.1): it bridges like a name ("Release 5.0.0 will carry
the new billing page" / "5.0.0 is scheduled for May 12")."""
_DOTTED_DATE = re.compile(r"\d{1,2}\.\d{1,2}\.(?:\d{4}|\d{2})")
"""A date written with dots (17.07.24, 09.09.2024): not a release number."""
_HOP_FACTOR = 0.5
"""A second-hop message ranks at most this share of the best match's score."""
_HOP_DF_SHARE, _HOP_MAX_DF = 0.01, 20
"""A second-hop word occurs in at most max(5, 1% of passages) passages, and never more
than 20 (at 50,000 messages, 1% is 500: three words shared by chance would rank a hop
as a bridge)."""
_HOP_PHRASE = 3
"""A hop sharing this many words with the best match ranks as a bridge does (0.8 of it)."""
_RELATIVE = re.compile(
    r"\b(?:(?:\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"(?:a\s+)?few|(?:a\s+)?couple\s+of|several)\s+"
    r"(?:hours?|days?|nights?|weeks?|fortnights?|months?|years?)\s+"
    r"(?:after|before|from|since|following|prior\s+to|ahead\s+of)"
    r"|(?:on\s+)?the\s+same\s+(?:day|date|week|weekend|night|morning|evening|time)\s+as"
    r"|coincid(?:e|es|ed|ing)\s+with"
    r"|the\s+(?:day|night|week|weekend|morning|evening)\s+(?:after|before))"
    r"\s+(?P<anchor>[^.;:!?,()\n]{3,80})",
    re.IGNORECASE,
)
"""A date stated relative to an event ("60 days after the start date", "the same day as
the quarterly review"): the event names what must also be in context, its date."""
_ANCHOR_WORDS = 4
_TIME_WORDS = frozenset({"date", "day", "time", "week", "month", "year"})
_ANCHOR_SEEDS = 2
"""Matches, best first, whose best passage may state a date relative to an event."""
_ANCHORS_PER_PASSAGE = 2
"""Relative dates read per passage (each is one more scoring of the index)."""
_TWO_EVENTS = re.compile(
    r"\b(?:(?P<next>(?:day|morning|night|evening|afternoon|week|weekend)\s+(?:after|before))"
    r"|clash\w*|conflict\w*|overlap\w*|collide\w*"
    r"|same\s+(?:day|night|morning|evening|week|weekend|time)\s+as"
    r"|in\s+town"
    r"|be\s+(?:around|away|back|free|here|there)\s+(?:to|for|on|by|in\s+time|when|during)"
    r"|(?:available|free)\s+(?:on|for|during|that)"
    r"|able\s+to\s+(?:make|go|come|attend|see|join|get\s+to|be\s+there)"
    r"|make\s+it\s+(?:to|for|back)"
    r"|(?:have\s+to|going\s+to|gonna|will\s+(?:i|we|he|she|they))\s+miss"
    r"|while\s+(?:i|we|he|she|they)(?:['\u2019](?:m|re)|\s+(?:am|are|is|was|were)|['\u2019]s)"
    r"\s+(?:away|gone|travel\w*|abroad|out\s+of\s+town))\b",
    re.IGNORECASE,
)
"""A question relating two events in time: "the morning after the recital", "will
Consuelo be in town to see...", "does it clash with...", "will I be able to go?",
"be around to play", "while we're away". Not a bare "after" or "while" ("What did the
vet say after the surgery?" asks about one event)."""
_COINCIDE_WINDOW = 7
"""Days either side of a best match's date within which another message's date counts
as near it (a week: "be in town for", "conflict with" compare the days around)."""
_COINCIDE_DATED = 60
"""Latest passages naming a day read per month name of the dates compared ..."""
_COINCIDE_READ = 2000
"""... among at most this many passages holding the name ("may" is a verb too)."""


@memo_short_texts(2048)  # the best matches' passages are read again every turn
def _relative_anchors(passage: str) -> tuple[str, ...]:
    """The events of the first :data:`_ANCHORS_PER_PASSAGE` relative dates in ``passage``."""
    relations = _RELATIVE.finditer(passage)
    return tuple(match.group("anchor") for match in islice(relations, _ANCHORS_PER_PASSAGE))


@memo_short_texts(2048)
def _bridge_clues(passage: str) -> tuple[str, ...]:
    """The names, identifiers and release numbers in ``passage`` (a match's best one)."""
    clues = [*_NAME.findall(passage), *_CODE.findall(passage)]
    clues += [v for v in _VERSION.findall(passage) if not _DOTTED_DATE.fullmatch(v)]
    return tuple(clues)


@memo_short_texts(2048)  # the best matches' passages are read again every turn
def _lower_case_words(passage: str) -> tuple[tuple[str, str], ...]:
    """The words of ``passage`` that :func:`_names_in_lower_case` may try as names, once
    each in order, with their content term: none in a passage that capitalizes words
    (a writer of capitals: a word in lower case is no name of theirs)."""
    if not written_in_lower_case(passage):
        return ()
    found = []
    for word in dict.fromkeys(tokenize(passage)):
        if not word.isalpha() or len(word) <= 2 or word in MONTHS or word in DAYS:
            continue
        terms = content_terms(word)
        if not terms or word.capitalize() in passage:
            continue  # (capitalized here: the capital rule reads it)
        found.append((word, terms[0]))
    return tuple(found)


_LOWER_CASE_CLUES = 16
"""Rare words of a lower-case passage tried as names, at most."""


def _names_in_lower_case(
    passage: str, pid: int, index: IndexHead, query_terms: set[str], rare: int
) -> list[str]:
    """Rare words ``passage`` writes in lower case that the history writes as a name.

    Many people type in lower case ("my coworker bastian covers for me", "bastian is off
    from march"), so :func:`_bridge_clues`, which reads capitals, finds no name to link
    their two messages by. The assistant's replies, or their own messages elsewhere,
    usually write the name capitalized inside a sentence ("thanks for telling me about
    Bastian"): a rare word (in at most ``rare`` passages) written that way is the name.
    Only in a passage written in lower case (beyond its first letter and "I"): a writer of
    capitals writes common words in lower case, not names. Read at question time over
    the few passages holding each rare word, so indexing pays nothing for it.
    """
    rare_words: list[tuple[int, str, str]] = []
    for word, term in _lower_case_words(passage):
        if term in query_terms:
            continue
        count = index.passage_frequency(term)
        if count <= rare:
            rare_words.append((count, word, term))
    # The rarest first, and only a few: an unpunctuated page typed in lower case is one
    # passage of thousands of rare words, each a scan of the passages holding it.
    rare_words.sort()
    return [
        word
        for _, word, term in rare_words[:_LOWER_CASE_CLUES]
        if written_as_name(word, term, index, also_lower=True, skip=pid)
    ]


_OTHER_SPEAKER_FACTOR = 0.7
"""Share of its score kept by another speaker's message, for a question naming one."""
_ASSISTANT_FACTOR = 0.5
"""Share of its score kept by an assistant's message, for a question about the user: the
assistant's advice restates the user's topic at length ("Most running injuries come from
doing too much too soon...") and, at the transcript factor, four such replies filled a
2,000-token context before the user's own short "my left shin was sore" (blind sets of
assistant chats, 2026-12-06: 42 -> 46 and 48 -> 50 questions; LoCoMo and phenomena, where
questions name a speaker, unchanged)."""
_SPEAKER_SHARE, _TRANSCRIPT_SHARE = 0.1, 0.8
"""A speaker wrote at least this share of the messages; speakers wrote at least the second."""
_DATELINE_LOOKBACK = 80
"""How far back (messages) a "when" question's match looks for the dateline above it."""
_DATELINE_HABIT = 2
"""Datelines a history holds before a match's date is looked for above it."""
_TOLD_SEEDS = 5
"""Best matches of a "when" question whose speaker's earlier line may say when."""
_TOLD_LOOKBACK = 6
"""How far back (messages) that line is looked for, within the match's sitting."""
_DATED_TEXT_CHARS = 4000
"""How much of a match is read for a date of its own (a pasted log need not be read whole)."""
_TO_ASSISTANT = re.compile(
    r"\b(?:did|have|has|had)\s+(?:you|the\s+assistant)\s+"
    r"(?:(?!(?:i|we|my|our|me|and)\b)\w+\s+){0,2}?"
    r"(?:suggest|recommend|advise|propose|tell|"
    r"say|mention|give|offer|come\s+up\s+with|list|make|plan|write|draft|put\s+together|"
    r"work\s+out|share|show|teach|provide|explain|pick|walk\s+me\s+through|lay\s+out|"
    r"book|order|reserve|find|send|fix|schedule|buy|add|set\s+up|create|build|calculate|"
    r"choose|estimate|predict|guess|figure|reckon|think)\b|"
    r"\b(?:you|the\s+assistant)\s+(?:(?!(?:i|we|my|our|me|and)\b)\w+\s+){0,2}?"
    r"(?:suggested|recommended|advised|proposed|told|said|"
    r"mentioned|gave|offered|came\s+up\s+with|listed|made|planned|wrote|drafted|"
    r"put\s+together|worked\s+out|shared|showed|shown|taught|provided|explained|picked|"
    r"walked\s+me\s+through|laid\s+out|booked|ordered|reserved|found|sent|fixed|scheduled|"
    r"bought|added|set\s+up|created|built|calculated|chose|chosen|estimated|predicted|"
    r"guessed|figured|reckoned|thought)\b|\b(?:from|by)\s+you\b|"
    r"\byour\s+(?:advice|suggestion|recommendation|idea|tip|answer|reply|pick|take|plan|"
    r"list|recipe|steps|script|checklist|schedule)s?\b",
    re.IGNORECASE,
)
"""A question about what the assistant said or did ("what did you suggest...", "the film
you mentioned", "your advice", "which hotel did you book for me?", "what did the
assistant recommend?"): in the past, so "can you tell me when..." is a request. The words
between "you" and the verb are never the user's ("What did I tell you I ordered?" asks
what the user did)."""
_LOWER_WORD = re.compile(r"(?<![^\W\d_])[^\W\d_]+(?![^\W\d_])")
_OWNER = re.compile(r"\b([A-Z][a-zà-ÿ]+)['\u2019\u02bc](?:s\b|(?=\s))")
_NOT_OWNER = re.compile(r"\b[A-Z][a-zà-ÿ]+\b(?!['\u2019\u02bc])")
_ADDRESS = re.compile(r"\s*(?:(?:hey|hi|hello|ok|okay|so)\W+)?[A-Z][a-zà-ÿ]+\s*,", re.IGNORECASE)
_APPOSITION = re.compile(
    r"\b[Mm]y\s+([a-z]{3,}(?:-[a-z]+)*)\s+([A-Z][a-zà-ÿ]+)"
    r"|\b([A-Z][a-zà-ÿ]+)\s*(?:,|\(|-|\u2013|\u2014)\s*[Mm]y\s+([a-z]{3,}(?:-[a-z]+)*)"
)
"""What the user calls someone, right beside the name: "my uncle Theo", "Ruairi - my
sister-in-law"."""


def _asked_names(query: str, index: IndexHead | None = None) -> frozenset[str]:
    """Lower-cased names a question asks about: its capitalized words, less its first
    word (a sentence opens capitalized: "Does", "Will"), a name it is addressed to
    ("Ava, when is...") and stop words. With the ``index``, a question that capitalizes
    no name also names the words it writes in lower case that the history always writes
    as a name ("what did caroline paint?": many people type questions in lower case)."""
    opening = re.match(r"\s*\S+", query)
    start = opening.end() if opening else 0
    address = _ADDRESS.match(query)
    if address:
        start = max(start, address.end())
    names = {
        m.group().lower()
        for m in _LOWER_WORD.finditer(query)  # any word; kept when capitalized ("Émile")
        if m.start() >= start
        and len(m.group()) > 1
        and m.group()[0].isupper()
        and m.group()[1:].islower()
        and content_terms(m.group())
    }
    if index is not None and not names:  # a question that capitalizes no name
        names.update(
            word
            for word in dict.fromkeys(_LOWER_WORD.findall(query[start:]))
            if word.islower()
            and len(word) > 2
            and (terms := content_terms(word))
            and written_as_name(word, terms[0], index)
        )
    return frozenset(names)


def _aliases(asked: frozenset[str], text: str) -> list[str]:
    """Relations set beside a name in ``asked``: "my uncle Theo", "Theo (my uncle".

    One scan of ``text`` whatever the number of names (a pasted list as the question).
    """
    found = []
    for relation, name, name2, relation2 in _APPOSITION.findall(text):
        if (name or name2).lower() in asked:
            found.append(relation or relation2)
    return found


_QUERY_CHARS = 4000
"""Characters of a query read for selection (its start and its end)."""
_LIST_QUESTION = re.compile(
    r"\bhow\s+many\b|\b(?:what|which)\s+(?:(?:kinds?|types?|sorts?)\s+of\s+\w+|"
    r"(?!(?:does|goes|this|thus|plus)\b)[a-z]{2,}[^su\W]s)\s+(?:do|does|did|has|have|had|are|"
    r"were|is|was|can|could|will|would|should)\b",
    re.IGNORECASE,
)
"""A question asking for a list or a count: "how many", "what/which" + a plural noun
+ an auxiliary ("What activities does...", "Which cities has...", "What kinds of art
does..."); "What causes the timeout?" (a verb) asks for one thing."""
_ASKS_GO_AHEAD = re.compile(
    r"(?:^|[.!?;:,\n\u2013\u2014-]|\b(?:so|and|but|ok|okay)\b)\s*(?:can|could|should|may)\s+"
    r"(?:i|we)\s+(?:just\s+|still\s+|safely\s+)?"
    r"(?!(?:ask|have|get|see|help|show|say|tell|check|use|try|find|fix|run|add|change|set|do|"
    r"go|start)\b)"
    # Someone else's go-ahead: "Can my son eat...", "should Mum take it", "is that
    # something Theo can eat?" (a verb of eating or taking, not any verb: "Could he
    # join remotely?" asks none), "is it safe for the baby".
    r"|(?:^|[.!?;:,\n\u2013\u2014-]|\b(?:so|and|but|ok|okay)\b)\s*(?:can|could|should|may)\s+"
    r"(?!(?:you|i|we)\b)(?:my\s+|our\s+|the\s+)?\w+\s+(?:just\s+|still\s+|safely\s+)?"
    r"(?:eat|drink|take|try|have\s+(?:some|any|it|that|this|one|them"
    r"|an?\s+(?:glass|bite|sip|drink|slice|piece|taste)))\b"
    r"|\bsomething\s+(?:my\s+|our\s+|the\s+)?\w+\s+(?:can|could|should)\s+(?:safely\s+)?"
    r"(?:eat|drink|have|take)\b"
    r"|\bsafe\s+for\s+(?!you\b)"
    r"|\b(?:is|would)\s+(?:it|that|this)\s+(?:be\s+)?(?:ok|okay|safe|alright|all\s+right)\b"
    r"|\bany\s+reason\s+(?:not\b|(?:i|we|he|she|they)\s+shouldn)"
    r"|\bwould\s+(?:that|it|this)\s+work\b|\bgood\s+(?:idea|plan|spot|choice)\b"
    r"|\banything\s+(?:i|we)\s+(?:should|need\s+to)\s+(?:know|think|flag|consider|watch|"
    r"worry|be\s+aware)\b",
    re.IGNORECASE,
)
"""A question asking for a go-ahead: "Can I eat...", "— should I take it?", "Is it safe
to...", "Would it be OK to...", "any reason not to?", "would that work?", "good plan?",
"anything I need to think about?", and for someone else ("Can my son eat...", "is that
something Theo can eat?"). Not a request or a how-to ("Can I ask you
something?", "How can I fix...", "Should I use pandas or polars?"): the modal opens a
sentence or a clause and is not followed by a verb of asking, getting or working."""
_GO_AHEAD_WORDS = (
    "can",
    "could",
    "should",
    "may",
    "safe",
    "ok",
    "alright",
    "all",
    "any",
    "work",
    "good",
)
"""Each way :data:`_ASKS_GO_AHEAD` asks holds one of these (in any case)."""


def _asks_go_ahead(question: str) -> bool:
    """Whether ``question`` asks for a go-ahead (:data:`_ASKS_GO_AHEAD`). An ASCII
    question holding none of :data:`_GO_AHEAD_WORDS` is not matched against the pattern,
    which takes some 15 us on a one-line question (ASCII folds case by plain
    lower-casing; other text is always matched)."""
    if question.isascii():
        lowered = question.lower()
        if not any(word in lowered for word in _GO_AHEAD_WORDS):
            return False
    return bool(_ASKS_GO_AHEAD.search(question))


_CONSTRAINT_TERMS = tuple(
    dict.fromkeys(
        content_terms(
            "allergic allergy intolerant celiac coeliac gluten lactose vegan vegetarian "
            "diabetic epipen anaphylaxis nsaids halal kosher pregnant warfarin anticoagulant "
            "thinners"
        )
    )
)
"""Stems of what a person cannot have: allergies, intolerances, diets, conditions, and a
blood thinner (what most often rules out an everyday painkiller or supplement)."""
_CONSTRAINT_PASSAGES = 20
"""Latest passages read per constraint term."""
_CONSTRAINTS_KEPT = 2
"""Statements of what the user cannot have that one question brings, at most."""
_RECENCY_BONUS = 0.01
_NOW_WORD = re.compile(
    r"\b(?:now|currently|current|these days|nowadays|at the moment|at present|still"
    r"|any ?more|any longer|latest)\b",
    re.IGNORECASE,
)
_QUESTION_START = re.compile(
    r"^\W*(?:(?:and|so|but|then|ok|okay|well|also)\W+)?(?:where|which|what|who|whom|whose|how|when|do|does|did|is|are|am|was|were|"
    r"have|has|can|could|would|will)\b",
    re.IGNORECASE,
)
_NOT_NOW = re.compile(r"\b(?:right\s+)?now\s+that\b|^\W*(?:right\s+)?now\b", re.IGNORECASE)
""""Now that I think about it, ...", "Now summarize ...", "Right now can you ...": not
about what holds now."""
_CLAUSE = re.compile(r"[.!?;,:\n]+")


_CHANGE_WORD = re.compile(r"\bchanged\b|\b(?:did|has|have|had)\b[^?.!]*\bchange\b", re.IGNORECASE)


def _asks_change(query: str) -> bool:
    """Whether the query asks how something changed ("How did my start date change?",
    "How has our guest count changed?"): a question clause with "changed", or "change"
    after did/has/have/had. Its answer holds the later change as well as the first
    statement. A request or a how-to ("What should I change in my CV?", "How do I change
    the filter?") asks no such thing."""
    return any(
        _QUESTION_START.search(clause) and _CHANGE_WORD.search(clause)
        for clause in _CLAUSE.split(query)
    )


def _asks_now(query: str) -> bool:
    """Whether the query asks what holds now: a question clause (it starts with a question
    word and the query asks something) naming the present ("Which city do I live in now?",
    "Do I still live in Lyon?", "Where do you work these days?"). "Now that...", a command
    starting with "now", or "still" in a statement ("I still can't remember...") are not."""
    if "?" not in query and not _QUESTION_START.search(query):
        return False
    for clause in _CLAUSE.split(query):
        if _QUESTION_START.search(clause) and _NOW_WORD.search(_NOT_NOW.sub(" ", clause)):
            return True
    return False


_STATE_CHANGES: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    (
        re.compile(
            r"\b(?:mov(?:ed|ing) (?:to|into|back to|out of|house|abroad|away)|"
            r"relocat(?:ed|ing) to|new (?:flat|house|home|apartment|place) (?:in|at|near))\b",
            re.IGNORECASE,
        ),
        frozenset(
            content_terms(
                "live lives living city town country home house flat apartment address "
                "place located based move moved stay staying neighbourhood neighborhood"
            )
        ),
    ),
    (
        re.compile(
            r"\b(?:new job|new role|new position|first (?:day|week) (?:at|of|in)|"
            r"start(?:ed|ing) (?:a new job|my new job|working (?:at|for)|at)|"
            r"(?:quit|left) my job|resigned|handed in my notice|got (?:hired|promoted))\b",
            re.IGNORECASE,
        ),
        frozenset(
            content_terms(
                "work works working worked job jobs company employer role position office "
                "boss career employed occupation profession"
            )
        ),
    ),
    (
        re.compile(r"\bgot (?:married|divorced|engaged)|\b(?:broke|split) up\b", re.IGNORECASE),
        frozenset(
            content_terms(
                "married marriage partner wife husband spouse relationship single dating "
                "girlfriend boyfriend fiance fiancee engaged divorced"
            )
        ),
    ),
    (re.compile(r"\bswitch(?:ed|ing) (?:to|over to)\b", re.IGNORECASE), frozenset()),
    (
        re.compile(
            r"\b(?:moved|pushed|bumped) (?:it|them|that|this|the \w+) (?:back |forward )?"
            r"(?:to|until|till) (?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|jan|feb|mar|apr|"
            r"may|jun|jul|aug|sep|oct|nov|dec|next|\d)|\b(?:postponed|rescheduled)\b|"
            r"\b(?:found|hired|got|have) (?:a |an |our |my |the )?(?:[a-z]+['\u2019]s )?"
            r"replacement\b|\breplaced (?:by|with)\b",
            re.IGNORECASE,
        ),
        frozenset(),
    ),
)
"""Statements of a clear change of state (a move, a new job, a marriage, a switch, a date
moved to a day or date or postponed, someone's replacement found), each with words of
what it changes: a change counts when it shares a content word with the question or the
best match, or when they name what it changes ("live" for a move)."""


def _states_change(text: str, topic: set[str], own: set[str]) -> bool:
    """Whether ``text`` states a clear change of state about the topic (the words of the
    question and the best match); ``own`` are the content words of ``text``."""
    for pattern, words in _STATE_CHANGES:
        if pattern.search(text) and (own & topic or words & topic):
            return True
    return False


_RETIRES = re.compile(
    r"\b(?:scrap(?:ped)?|ditch(?:ed)?|sold(?![- ]out)|got rid of|swapped|replaced|dropped|"
    r"instead|no longer|gave up|pulled out|switched|changed|moved|cancell?ed|scratch that)\b",
    re.IGNORECASE,
)
"""Words that retire a value a message names ("scrap the sage", "ditched FreeAgent",
"kev sold the transit", "had the Volvo pulled out", "no longer at Oakfield"); past forms
only, where a word has others ("selling point", "stopping by", "changing table" retire
nothing)."""
_RETIRED_TERMS = 6
"""The rarest words of a match's best sentence whose later mentions are read."""
_RETIRED_CHARS = 300
"""How much of a later sentence is read for a retiring word (a retirement is said in a
few words; a pasted block of code is no sentence to read whole)."""
_RETIRED_FACTOR = 0.3
"""A retirement's share of its match's score: below the selection's cutoff
(:data:`RELATIVE_CUTOFF`), so every match ranked by its own score stays ahead of it."""
_CHANGE_SEEDS = 2
"""Best matches whose later changes a question about now looks for."""
_CHANGES_PER_SEED = 2
"""At most this many changes per best match (the best ranked): the words of a change
("we moved to Aarhus") need not say what changed, so one is not trusted to be it."""
_ECHO_FACTOR = 0.25
"""An earlier message asking what the query asks keeps this share of its score."""
_ECHO_CHECKED = 8
_TYPICAL_SAMPLE = 30
"""Fewer messages than this have no reliable median similarity: chance level is used."""


def _doc_text(entry: IndexEntry, message: BaseMessage) -> str:
    text = message_text(message)
    parts = [text]
    if entry.name:
        parts.append(entry.name.replace("_", " "))
    if entry.status == "summarized" and entry.summary and entry.summary not in text:
        parts.append(entry.summary)
    return "\n".join(parts)


def _speaker(message: BaseMessage) -> str | None:
    """Who wrote a person's message, when the message says (its ``name``)."""
    if message.type in ("human", "ai") and isinstance(message.name, str) and message.name:
        return message.name
    return None


def _same_speaker(one: BaseMessage, other: BaseMessage) -> bool:
    """Whether two messages are a person's own words from one speaker (no tool calls)."""
    return (
        one.type == other.type
        and one.type in _SPEAKER_TYPES
        and _speaker(one) == _speaker(other)
        and not tool_calls_of(one)
        and not tool_calls_of(other)
    )


def _same_voice(
    speakers: np.ndarray,
    entries: Sequence[IndexEntry],
    messages: Sequence[BaseMessage],
    one: int,
    other: int,
) -> bool:
    """Whether entries ``one`` and ``other`` (slots) are one speaker's: by the lexical
    index's speaker ids when both are named, else by role and name (:func:`_same_speaker`)."""
    first, second = int(speakers[one]), int(speakers[other])
    if first >= 0 and second >= 0:
        return first == second
    return _same_speaker(messages[entries[one].id], messages[entries[other].id])


def _doc_key(entry: IndexEntry) -> tuple[str, str | None, str]:
    """Identity of the :func:`_doc_text` result: what it reads besides the message.

    The content hash stands for the message (type, name, text, tool linkage); the
    summary counts only once a model made it (pending, verbatim and extractive entries
    of one message read the same).
    """
    summary = entry.summary if entry.status == "summarized" else ""
    return (entry.content_hash, entry.name, summary)


_ENTRY_ID = attrgetter("id")
_LEXICAL = "lexical"
"""Name of the selector's lexical index in a history view's cache."""


class _LexicalCache:
    """A BM25 index over a list of entries' documents, extended as the list grows.

    Entries are compared on every use, so the cache holds for any history: a view of
    an edited history keeps it (``valid_below``), sharing it with the old view.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seen: list[IndexEntry] = []
        self.index = BM25Index()
        self.positions = np.zeros(0)

    @staticmethod
    def valid_below(p: int) -> bool:
        return True

    def read(
        self, messages: Sequence[BaseMessage], entries: Sequence[IndexEntry]
    ) -> tuple[IndexHead, np.ndarray]:
        with self.lock:
            seen, index, positions = self.seen, self.index, self.positions
            k = min(len(seen), len(entries))
            if not same_prefix(entries, seen, k):
                same = list(map(is_, entries[:k], seen[:k]))  # pointer checks, in C
                # Only from the first other object on: a turn whose last few entries are
                # provisional (indexing has not caught up) compares those few by content.
                first = same.index(False)
                ours = list(map(_doc_key, entries[first:k]))
                theirs = list(map(_doc_key, seen[first:k]))
                if ours != theirs:
                    # An edited, regenerated or forked history: the documents before the
                    # first that differs stay, in a copy (readers of this index keep it).
                    pairs = zip(ours, theirs, strict=True)
                    k = first + next(i for i, (a, b) in enumerate(pairs) if a != b)
                    index = index.prefix(k)
                    seen, positions = seen[:k], positions[:k]
                # Equal documents: hold these objects, so the next turn compares
                # pointers; their positions may differ (a deletion shifts them).
                seen = [*entries[:k], *seen[k:]]
                ids = np.fromiter(map(_ENTRY_ID, entries[:k]), np.float64, k)
                positions = np.concatenate([ids, positions[k:]])
            if len(entries) > len(seen):
                new = entries[len(seen) :]
                for entry in new:
                    message = messages[entry.id]
                    index.add(_doc_key(entry), _doc_text(entry, message), _speaker(message))
                # In place: the list is this cache's own, read only under its lock (a
                # copy each turn was a pass over every entry).
                seen.extend(new)
                ids = np.fromiter(map(_ENTRY_ID, new), dtype=np.float64, count=len(new))
                positions = np.concatenate([positions, ids])
            self.seen, self.index, self.positions = seen, index, positions
        return index.head(len(entries)), positions[: len(entries)]


def _best_first(values: np.ndarray, slots: np.ndarray, at_least: int) -> np.ndarray:
    """The first ``at_least`` (or more) of ``slots`` by descending ``values``.

    Exactly the head of ``slots[np.argsort(-values[slots], kind="stable")]``, found
    without sorting every slot: everything at or above the ``at_least``-th best value
    (ties included) is taken in slot order, then sorted stably.
    """
    if len(slots) > at_least:
        negated = -values[slots]
        bar = np.partition(negated, at_least - 1)[at_least - 1]
        slots = slots[negated <= bar]
    return slots[np.argsort(-values[slots], kind="stable")]


def _rest_of_ranking(values: np.ndarray, slots: np.ndarray, skip: int) -> Iterator[int]:
    """The ranking of ``slots`` after its first ``skip`` (sorted only if it is read)."""
    if len(slots) > skip:
        yield from _best_first(values, slots, len(slots))[skip:].tolist()


def _lexical(
    messages: Sequence[BaseMessage], entries: Sequence[IndexEntry]
) -> tuple[IndexHead, np.ndarray]:
    """The BM25 index over ``entries``' documents, kept with the history's view.

    Each turn's candidates are the last turn's plus a few: the same entry objects
    (reconciliation keeps them), so a pointer comparison tells the index still holds
    them and only the new ones are tokenized. Entries are never edited in place; other
    objects are compared by :func:`_doc_key`. Anything else (an edited or deleted
    earlier message) builds a new index. The index is read at ``len(entries)``
    documents, so a longer one (another caller's, e.g. ``warm`` over every entry)
    serves as well. Also returns the entries' positions (``id``), as floats.
    """
    view, _ = view_of(messages)
    with view.derived_lock:
        cache = view.cache.get(_LEXICAL)
        if cache is None:
            cache = view.cache[_LEXICAL] = _LexicalCache()
    result: tuple[IndexHead, np.ndarray] = cache.read(messages, entries)
    return result


@dataclass
class _Scored:
    fused: np.ndarray
    lexical: IndexHead
    best_passage: np.ndarray
    cosines: np.ndarray | None
    """Best-passage cosine per message (``None`` without a model)."""
    echoes: np.ndarray
    """Slots of earlier messages asking what the query asks."""
    echo_scores: np.ndarray
    """Their fused scores before the echo demotion (aligned with ``echoes``)."""
    asked_again: list[tuple[int, float]]
    """Longer messages one of whose sentences asks what the query asks, and their fused
    scores: not echoes (they may say more), but their reply ranks with them."""
    positions: np.ndarray
    """Each entry's position (``id``), as floats."""
    named: int = -1
    """The speaker (index into the lexical index's names) a transcript question names
    alone, or -1."""
    asked: frozenset[str] | None = None
    """The names the question asks about (:func:`_asked_names`), when scoring read them
    (in a transcript); ``None``: not read yet."""
    weights: np.ndarray | None = None
    """The role multipliers :func:`_about_the_user` applied for a question about the user
    in the first person, which links and completions apply too (``None``: none)."""


@dataclass(frozen=True)
class EmbeddingProfile:
    """How the selector uses an embedding model: what it embeds, how much it trusts it.

    Attributes:
        unit_words: Passages of one message are joined into units of up to this many
            words before embedding (0: each passage alone). A static model averages
            word vectors and needs a few sentences to average; a transformer reads one
            sentence well, yet the packaged MiniLM found more in 60-word units too.
        semantic_weight: Share of the fused score given to embedding similarity.
        related_words: Words near the question's words in the model's space join the
            lexical query (:mod:`~langgraph_librarian.select._related`): on for the
            packaged static model, whose single words have meaningful vectors; a model
            opts in or out with a ``related_words`` attribute.
        static_words: The related words are found with the packaged static model's
            word vectors, not the model's own: a model whose ``related_words`` is
            ``"static"`` (the packaged transformers: a transformer's vector of a lone
            word is not what it was trained for, and embedding a history's vocabulary
            with one takes minutes, against milliseconds for the static table).

    A model declares its own with ``passage_words`` and ``semantic_weight`` attributes
    (the packaged models do); any other model gets the defaults below.
    """

    unit_words: int = 0
    semantic_weight: float = 0.5
    related_words: bool = False
    static_words: bool = False

    @classmethod
    def of(cls, embeddings: Embeddings | None) -> EmbeddingProfile:
        default = cls()
        words = getattr(embeddings, "passage_words", default.unit_words)
        weight = getattr(embeddings, "semantic_weight", default.semantic_weight)
        valid_words = isinstance(words, int) and not isinstance(words, bool) and words >= 0
        valid_weight = isinstance(weight, (int, float)) and 0.0 <= weight <= 1.0
        unit_words = words if valid_words else default.unit_words
        # The packaged static model sums word vectors, so its single words have
        # meaningful vectors: they find related words for the lexical query. Another
        # model opts in with a ``related_words`` attribute (a transformer would take
        # minutes to embed the vocabulary).
        packaged = embeddings is not None and embedding_model_id(embeddings) == STATIC_MODEL_ID
        related = getattr(embeddings, "related_words", packaged)
        static = isinstance(related, str) and related.strip().lower() == "static"
        return cls(
            unit_words,
            float(weight) if valid_weight else default.semantic_weight,
            related if isinstance(related, bool) else static,
            static and embeddings is not None and not packaged,
        )

    def word_model(self, embeddings: Embeddings, model: str) -> tuple[Embeddings, str]:
        """The model whose word vectors find related words, and its id: ``embeddings``
        itself, or the packaged static model for a model asking for its words."""
        if not self.static_words:
            return embeddings, model
        return _static_model(), STATIC_MODEL_ID


def _static_model() -> Embeddings:
    static = load_embeddings("static")
    if static is None:  # pragma: no cover - "static" is never a disabled name
        raise RuntimeError("the packaged static model is not available")
    return static


_STATIC_WORDS_WARNED: list[bool] = []


def _static_related(query: str, index: IndexHead) -> dict[str, float] | None:
    """Related words from the packaged static model's table, for a model asking for them
    (:attr:`EmbeddingProfile.static_words`), or ``None`` when the static model failed.

    Its failure (a broken install, memory) is its own, not the selector's model's: the
    ranking goes on without related words, the selector's model is still asked, and the
    failure is logged once per process. What only the user can fix is raised.
    """
    try:
        return related_words(_static_model(), STATIC_MODEL_ID, query, index)
    except Exception as exc:
        if not fails_open(exc):
            raise
        if not _STATIC_WORDS_WARNED:
            _STATIC_WORDS_WARNED.append(True)
            logger.warning(
                "librarian: related words from the packaged static model failed (%s); "
                "ranking without them",
                describe(exc),
                exc_info=exc,
            )
        return None


def _group_chat(latest: np.ndarray) -> bool:
    """Whether the latest messages (their speaker ids, -1 for none) are a group's chat:
    named speakers wrote most of them (a transcript, as :func:`_about_speaker` reads
    one: a pasted "Error: ..." or "Note: ..." names no one), and at least
    :data:`_GROUP_SPEAKERS` of them wrote two messages or more."""
    named = latest[latest >= 0]
    if 2 * len(named) <= len(latest):
        return False
    return int(np.count_nonzero(np.bincount(named) >= 2)) >= _GROUP_SPEAKERS


def _group_replies(
    slot: int,
    pos: int,
    speakers: np.ndarray,
    slot_of: Callable[[int], int | None],
    messages: Sequence[BaseMessage],
) -> list[int]:
    """Positions of the replies a short message gets in a group: the short messages of
    other speakers right after it, up to its speaker's next line, a long message or
    :data:`_GROUP_REPLIES` of them. A question or a request put to a group is answered
    by several people, each in a line of their own ("Vote time. Lakes, tablet or
    bench?" / "tablet..." / "bench" / "Bench. Sorry son" / "Bench from me too. So bench
    it is, 3 to 1"; "someone has to ring the landlord about the fan" / "I'll ring him
    tomorrow"), and the line that settles it is often the speaker's next. Between two
    people only a question brings the one reply after it
    (:meth:`LocalSelector._exchange`).
    """
    speaker = int(speakers[slot])
    if speaker < 0:
        return []
    found: list[int] = []
    for after in range(pos + 1, min(pos + 1 + _GROUP_REPLIES, len(messages))):
        at = slot_of(after)
        if at is None:
            break
        other = int(speakers[at])
        # The group's assistant (an AI message without a name: a bot taking part) is a
        # speaker of its own; any other unnamed message (a tool's output) ends the run.
        if other == -1 and messages[after].type != "ai":
            break
        if _word_count(message_text(messages[after])) >= _SHORT_MESSAGE_WORDS:
            break
        found.append(after)
        if other == speaker:  # the speaker's next line ends it
            break
    return found


_TYPO_MIN_LETTERS = 5
"""Shorter words are left as typed: one edit turns most short words into others."""
_TYPO_WORD = re.compile(r"(?<![\w'’-])[A-Za-z]{5,}(?![\w'’-])")
_TYPO_WORDS_READ = 12
"""Words of a query tried for a typo, at most (a pasted page is not spell-checked)."""


def _swapped(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` with two neighbouring letters swapped."""
    if len(a) != len(b):
        return False
    diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]


def _spelled(query: str, index: IndexHead) -> str:
    """``query`` with a misspelled word replaced by the history's word one edit from it.

    People type questions fast ("what did i say abuot my alergies"): a word that is
    neither in the history nor a known English word, with a word
    of the history one edit away (a letter dropped, doubled, swapped or mistyped), is
    read as that word: two letters swapped first, the most frequent in the history
    when several are. Known words are the packaged vocabulary's and the 50,000 most
    frequent of an English frequency list ("grieving", "vegan" are no typos of "griefing",
    "began"). Only
    lower-case ASCII words of five letters or more: a capitalized word is a name, and
    one edit turns most short words into others. With no such word, the query is
    returned as it is.
    """
    known = english_words()
    changes: dict[str, str] = {}
    for match in islice(_TYPO_WORD.finditer(query), _TYPO_WORDS_READ):
        word = match.group()
        if not word.islower() or word in known or word in changes:
            continue
        terms = content_terms(word)
        if not terms or index.passage_frequency(terms[0]) > 0:
            continue
        best, seen = "", (False, 0)
        for other in sorted(edits1(word)):
            stems = stem_terms([other])  # not content_terms: its cache keeps real texts
            count = index.passage_frequency(stems[0]) if stems else 0
            # Two letters swapped is the commonest slip ("recieved" is "received"
            # before it is "relieved"); then the history's most frequent word.
            key = (count > 0 and _swapped(word, other), count)
            if count and key > seen:
                best, seen = other, key
        if best:
            changes[word] = best
    if changes:
        query = _TYPO_WORD.sub(lambda m: changes.get(m.group(), m.group()), query)
    return _joined(query, index)


_PAIR = re.compile(r"(?<![\w'’-])([a-z]{2,})[ -]([a-z]{2,})(?![\w'’-])")
_PAIRS_READ = 24
"""Pairs of a query's words tried as one word, at most."""


def _joined(query: str, index: IndexHead) -> str:
    """``query`` with two of its words written as the one word the history uses.

    People write a compound apart or together as it comes ("work out" / "workout",
    "set up" / "setup", "home made" / "homemade", "check-in" / "checkin"), and the two
    forms share no term: "How often does John work out with his family?" missed "How
    often do you all workout together?". Two lower-case words whose joined form is a
    known English word (:func:`~langgraph_librarian._engine.static.english_words`) and a
    content word of the history get it added after them; the words themselves stay. Only
    words of two letters or more, the first :data:`_PAIRS_READ` pairs.
    """
    known = english_words()
    added: dict[int, str] = {}
    start = 0
    for _ in range(_PAIRS_READ):
        match = _PAIR.search(query, start)
        if match is None:
            break
        start = match.start(2)  # overlapping pairs: "a b c" tries "ab" and "bc"
        joined = match.group(1) + match.group(2)
        if joined not in known:  # "enjoy eating" is no "enjoyeating" hashtag
            continue
        stems = stem_terms([joined])
        if stems and index.passage_frequency(stems[0]) > 0:
            added[match.end()] = joined
    if not added:
        return query
    out, last = [], 0
    for end, word in added.items():
        out.append(query[last:end])
        out.append(f" {word}")
        last = end
    out.append(query[last:])
    return "".join(out)


def _question(query: str) -> str:
    """The query as read for selection: without an application's time stamp before it
    (:func:`~langgraph_librarian.select.lexical.without_stamp`), a question in German,
    Spanish, French, Italian, Portuguese or Dutch without its function words
    (:func:`~langgraph_librarian._engine.text.without_foreign_function_words`: the
    engine's stop words are English), and a pasted page or log keeps its start and end.

    The question in a long paste is at its start or its end ("here is the log ... why
    does it fail?"); tokenizing and embedding 3 MB of it took over a second a turn and
    matched every message. The agent still gets the whole message.

    Remembered for texts up to :data:`_READ_CACHED_CHARS` long: a selection reads its
    query about ten times (terms, related words, vector, parts, echoes), and the echo
    check reads the few best-matching earlier questions.
    """
    if len(query) <= _READ_CACHED_CHARS:
        return _read_question(query)
    return _read_question.__wrapped__(query)


_READ_CACHED_CHARS = 2000
"""The longest text :func:`_question` remembers (a pasted page is read each time rather
than held in the cache)."""


@lru_cache(maxsize=1024)
def _read_question(query: str) -> str:
    query = without_stamp(query)
    if len(query) > _QUERY_CHARS:
        half = _QUERY_CHARS // 2
        query = f"{query[:half]}\n{query[-half:]}"
    read = _HEDGES.sub("", _ABOUT_THE_TALK.sub("", query))
    if not _WORD_CHAR.search(read):  # a question about the conversation alone
        read = query
    return without_foreign_function_words(read)


_WORD_CHAR = re.compile(r"[^\W_]")
_ECHO_TEXT_CHARS = 600
"""The longest earlier message read as a question for an echo (:func:`is_echo` reads no
longer one)."""

_HEDGES = re.compile(
    r"\b(?<!\bmost\s)(?<!\bmore\s)(?<!\bless\s)(?<!\bthe\s)(?<!\ba\s)(?<!\ban\s)"
    r"(?:likely|probably|possibly|perhaps|maybe)\s+"
    r"|\b(?:the\s+|a\s+)?(?:sort|kind|type)\s+of\s+(?:person|man|woman|guy)\s+"
    r"(?:who|that)\s+|\bsomeone\s+(?:who|that)\s+"
)
"""How sure the asker is ("Would Priya probably enjoy...", "Is Noor likely to...") and
what kind of person they ask about ("Is Bev the sort of person who...") say nothing of
the facts that answer: "likely" reads as "like", which most chat lines hold, and the
static model's neighbours of "person" are "someone" and "people". In lower case only
(a title, "Maybe Happy Ending", keeps its word) and not as an adjective ("the most
likely cause", "the likely side effects")."""

_MANY_TALKS = (
    r"(?:the|these|those|our|their|all(?:\s+(?:of\s+)?(?:the|these|our))?|"
    r"(?:our\s+|the\s+)?(?:earlier|previous|past))\s+(?:conversations|chats)"
)
_THIS_TALK = r"(?:this|our|(?:our\s+)?(?:earlier|previous|past))\s+(?:conversation|chat)"
_ABOUT_THE_TALK = re.compile(
    # Anchored after a word (not inside a run of spaces: the search stays linear).
    r"(?<![\s,])(?:\s*,)?\s*\b(?:"
    r"(?:over|during|in|throughout|across|from)\s+(?:the\s+course\s+of\s+)?"
    + _MANY_TALKS
    + r"|(?:over|during|in|throughout)\s+(?:the\s+course\s+of\s+)?"
    + _THIS_TALK
    + r"|according\s+to\s+what\s+(?:he|she|they)\s+(?:has\s+|have\s+|had\s+)?"
    r"(?:mentions?|mentioned|says?|said|tells?|told|shares?|shared|writes?|wrote)"
    r")(?=\s*(?:so\s+far\s*)?(?:[?.!]|$))",
    re.IGNORECASE,
)
"""A question's words about the conversation itself, at the end of a sentence ("...,
according to what he mentions?", "... over the course of the conversations?", "... in
our earlier chats?"): every message is part of the conversation, so they match nothing
the question asks about, and the static model's neighbours of "course" and
"conversations" (taught, curriculum, talked) pulled unrelated lines in. Not in the
middle of a sentence ("in the chat with his mum" names which chat), not "in the chat"
(a group chat's members: "Who else was in the chat?"), not "according to what Caroline
said" (whose account), nor "what you said" / "what I said" (the question is about the
assistant, or the user)."""


_AND_BREAK = (
    r",?\s+and\s+also\b:?\s*"  # "..., and also: what is..."
    r"|,?\s+and\s+(?=(?:what|where|when|who|whom|whose|which|how|why)\b)"  # "... and when"
)
_PART_BREAK = re.compile(
    r"(?<=\?)\s+(?=\S)|"  # after a question mark: "Where is X? And who leads Y?"
    + _AND_BREAK,
    re.IGNORECASE,
)
_AND_PART_BREAK = re.compile(_AND_BREAK, re.IGNORECASE)
_BACK_REFERENCE = re.compile(
    r"\b(?:it|its|he|him|his|she|her|hers|they|them|their|theirs|there|then|that|this|"
    r"these|those|each|both)\b|^(?:if\s+(?:not|so)|otherwise|or)\b",
    re.IGNORECASE,
)
"""Words of a later part that refer to the first part's subject ("..., and how much
did it cost?", "If not, who...", "Roughly how long for each part?", "Do both have
step-free access?"): that part asks nothing on its own."""
_PART_TERMS = 2
"""Content words each part of a question needs for the parts to be selected apart."""
_MAX_PARTS = 4


def _question_parts(query: str) -> list[str]:
    """The questions ``query`` asks, when it asks several things at once.

    "Which port does the search service use, and also: what is the budget for Beacon?"
    is two questions: scored as one, the part with the more (and more frequent) matching
    messages filled the selection and the other part's one answer was left out. Split
    after a question mark (when the query ends with one), at "and also", and at "and"
    before a question word ("... and when did Jonas pick up the cake?"), not at a
    semicolon (pasted code); every part must hold at least :data:`_PART_TERMS` content
    words of its own ("where and when?", "X and why?" stay one question), no later part
    may refer back to the first one's subject ("..., and how much did it cost?"), and
    the query must be English. At most :data:`_MAX_PARTS` parts; otherwise the query as
    it is.
    """
    query = query.strip()
    if len(query) > _QUERY_CHARS or without_foreign_function_words(query) != query:
        # The breaks are English; a part in another language may name no subject at
        # all ("¿Dónde vive Marta? ¿Cuándo se mudó a Lisboa?").
        return [query]
    # Question marks separate questions only when the query ends with one: "Where is
    # X? I need it for the form." is one question and its reason.
    asks = query.rstrip(" \"')]»”’").endswith("?")
    parts = [p.strip(" ,:;-") for p in (_PART_BREAK if asks else _AND_PART_BREAK).split(query)]
    parts = [p for p in parts if p]
    if not 1 < len(parts) <= _MAX_PARTS:
        return [query]
    if any(len(set(content_terms(p))) < _PART_TERMS for p in parts):
        return [query]
    if any(_BACK_REFERENCE.search(p) for p in parts[1:]):
        return [query]
    return parts


def _merged(selections: Sequence[Selection]) -> Selection:
    """One selection from the selections of a question's parts, taking turns.

    Each list (the matches, the next-best, the spare candidates) is the parts' lists
    interleaved, best of each part first, each position once: a budget that holds only
    a few messages holds the best of every part. The exchanges kept by structure stay
    at the end of ``ids``.
    """

    def turns(lists: Sequence[Sequence[int]], skip: Collection[int] = ()) -> list[int]:
        seen = set(skip)
        out: list[int] = []
        for row in zip_longest(*lists):
            for position in row:
                if position is not None and position not in seen:
                    seen.add(position)
                    out.append(position)
        return out

    # A message one part keeps by structure and another ranks as a match is a match.
    matched = {i for s in selections for i in set(s.ids).difference(s.exchange_ids)}
    exchange = [i for i in turns([s.exchange_ids for s in selections]) if i not in matched]
    held = set(exchange)
    ids = turns([[i for i in s.ids if i not in held] for s in selections])
    ids += [i for i in exchange if i not in set(ids)]
    reserve = turns([s.reserve_ids for s in selections], ids)
    spare = turns([s.spare_ids for s in selections], {*ids, *reserve})
    flow = turns([s.flow_ids for s in selections], {*ids, *reserve})
    return Selection(
        ids=ids,
        reasoning=" | ".join(f"part {n}: {s.reasoning}" for n, s in enumerate(selections, start=1)),
        strategy="local",
        candidates=max(s.candidates for s in selections),
        expanded_ids=turns([s.expanded_ids for s in selections]),
        reserve_ids=reserve,
        linked_ids=turns([s.linked_ids for s in selections]),
        exchange_ids=[i for i in exchange if i in set(ids)],
        spare_ids=spare,
        flow_ids=flow,
    )


def _about_speaker(
    query: str, fused: np.ndarray, index: IndexHead
) -> tuple[np.ndarray, int, frozenset[str] | None]:
    """Scores with the other speakers' messages lowered, for a question naming one.

    In a transcript of several people ("Caroline: ...", "Melanie: ...", or messages
    with a ``name``), what a person does, likes or plans is stated by that person:
    on LoCoMo's first five conversations 96% of the evidence of a question naming one
    speaker is that speaker's own message. Their partner's lines on the same topic
    ("Your pottery looks great!") compete for the same words, so they keep only a
    share of their score. Read as a transcript only when at least two speakers each
    wrote a tenth of the messages and named speakers wrote most of them (a pasted
    "Error: ..." is no speaker); a question naming no speaker, or two, is unchanged.
    A name counts written as one (capitalized, not the question's first word: "Will
    the dentist...", "when will..." name no Will) and not as the one it is addressed
    to ("Ava, when is my appointment?" asks the bot, not about it).

    Also returns the speaker whose own reply may answer (:meth:`LocalSelector._voiced`),
    or -1: the one speaker named, or of two named the one not written as an owner
    ("What does Melanie think about Caroline's plan?": Melanie; nothing is lowered),
    and the names the question asks about when they were read (in a transcript), else
    ``None`` (the name bridge reads them once, not twice).
    """
    people = _transcript_people(index)
    if people is None:
        return fused, -1, None
    speakers, names = index.speakers()
    asked = _asked_names(query, index)
    named = [int(p) for p in people if names[p] in asked]
    if len(named) == 2:
        # "What does Melanie think about Caroline's decision?": both are named and
        # neither is lowered, but the one not written as an owner is who answers.
        # A name written both ways ("Leo ... Leo's trip") is no owner.
        owners = {m.group(1).lower() for m in _OWNER.finditer(query)} - {
            m.group().lower() for m in _NOT_OWNER.finditer(query)
        }
        subjects = [p for p in named if names[p] not in owners]
        return fused, subjects[0] if len(subjects) == 1 else -1, asked
    if len(named) != 1:
        return fused, -1, asked
    others = (speakers >= 0) & (speakers != named[0])
    return np.where(others, fused * _OTHER_SPEAKER_FACTOR, fused), named[0], asked


_FIRST_PERSON = re.compile(r"\b(?:[Ii](?!\.\w)|[Mm]y|[Ww]e|[Oo]ur)\b")
"""The user speaking of themselves ("i.e." is no "I")."""
_WH_START = re.compile(
    r"^\W*(?:(?:and|so|but|then|ok|okay|well|also)\W+)?(?:what|which|who|whom|whose|when|"
    r"where|why|how)\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[?!]|\.(?=\s|$)")
_YOU = re.compile(r"\byou\b", re.IGNORECASE)
_ME = re.compile(r"\bme\b")
_HAPPENED = re.compile(
    r"\b(?:did|was|were|had|has\s+been|have\s+been|'s\s+been|gave|told|sent|lent|brought|"
    r"bought|got|took|left|owed|paid|made|showed|[a-z]{3,}ed)\b",
    re.IGNORECASE,
)


def _me_question(query: str) -> bool:
    """Whether the query is a wh-question about what happened to the user ("What did the
    nurse call me about?", "Which leg's been giving me trouble?", "Who lent me the
    tent?"): "me" in its first sentence, after a past form and before any "you"
    ("Which hotel did you book for me?" asks what the assistant did). "What would the
    plan cost me?" or "What's the command for me?" ask for information, as a request
    does ("Can you remind me...", "How long is it? Remind me."): "me" says nothing of
    what they ask about there. Each step is one scan (no backtracking over the text)."""
    if not _WH_START.search(query):
        return False
    end = _SENTENCE_END.search(query)
    first = query[: end.start()] if end else query
    you = _YOU.search(first)
    if you:
        first = first[: you.start()]
    at = first.rfind(" me")  # the last "me" (a cheap look, then the word test)
    while at >= 0 and not _ME.match(first, at + 1):
        at = first.rfind(" me", 0, at)
    return at >= 0 and _HAPPENED.search(first, 0, at) is not None


_HOW_TO = re.compile(
    r"^\W*(?:(?:and|so|but|then|ok|okay|well|also)\W+)?how\s+(?:(?:do|can|should|would)\s+"
    r"(?:i|we)\b|(?:much|many|long)\b[^?.!]*\b(?:do|should|would)\s+(?:i|we)\s+need\b)",
    re.IGNORECASE,
)
"""A question asking how to do something or how much of it is needed ("How do I make the
roasted rhubarb?", "How much lamb do I need for ten?"): in the first person, but asking
for the assistant's instructions, as a request does, not for what the user said."""


def _transcript_people(index: IndexHead) -> np.ndarray | None:
    """The speakers (indices into the lexical index's names) who each wrote a tenth of
    the messages, when the history is a transcript of named people (at least two of
    them, and named speakers wrote most messages); else ``None``."""
    speakers, names = index.speakers()
    n = len(speakers)
    if len(names) < 2 or n == 0:
        return None
    counts = np.bincount(speakers[speakers >= 0], minlength=len(names))
    people = np.flatnonzero(counts >= _SPEAKER_SHARE * n)
    if len(people) < 2 or counts[people].sum() < _TRANSCRIPT_SHARE * n:
        return None
    return people


def _transcript_speakers(index: IndexHead) -> np.ndarray:
    """Each message's named speaker where the history is a transcript of named people
    (:func:`_transcript_people`), else -1 for every message: in a user's chat a leading
    "Update:" or "Batch:" names no one, and two of the user's messages are by the same
    author whatever they open with."""
    speakers, _ = index.speakers()
    if _transcript_people(index) is not None:
        return speakers
    return np.full(len(speakers), -1, dtype=speakers.dtype)


def _about_the_user(
    query: str,
    fused: np.ndarray,
    positions: np.ndarray,
    messages: Sequence[BaseMessage],
    transcript: Callable[[], bool],
) -> np.ndarray:
    """Scores with the assistant's messages lowered, for a question about the user (the
    user's, for one about what the assistant said).

    "Which software do I use to send invoices?" is answered by what the user said ("I
    invoice through FreeAgent at the moment"), while the assistant's advice ("Send
    invoices the day the work is signed off") shares more of its words. A question in
    the first person ("I", "my", "we", "our"; "me" in a question, not in a request:
    "what did the nurse call me about?", not "remind me...") that does not ask what the
    assistant said (:data:`_TO_ASSISTANT`) keeps the user's messages at full score and
    the assistant's at :data:`_ASSISTANT_FACTOR`, lower than a question naming a speaker
    of a transcript keeps the other speakers' (:data:`_OTHER_SPEAKER_FACTOR`): the
    assistant's long replies restate the user's topic in more words than any other
    speaker does. A question in the third person ("What is the school nurse doing for
    the trip?", "When is the closing on the house?") asks about the user's world too,
    in a chat of a user and an assistant (not a ``transcript`` of named people, whose
    questions name their speakers): the assistant's messages keep
    :data:`_OTHER_SPEAKER_FACTOR` there, as the assistant also brings facts of its own
    (an itinerary it drew up); so they do for a how-to question (:data:`_HOW_TO`: "How
    do I make the rhubarb?" asks for the assistant's instructions). A question about
    what the assistant said or did ("What late fee did you suggest?") keeps the user's
    messages at that factor in such a chat: the user's request shares the question's
    words, the draft that answers it fewer. A reply relaying a tool's result is never
    lowered (:func:`_assistant_messages`).
    """
    weights, _ = _user_weights(query, positions, messages, transcript)
    return fused if weights is None else fused * weights


def _user_weights(
    query: str,
    positions: np.ndarray,
    messages: Sequence[BaseMessage],
    transcript: Callable[[], bool],
) -> tuple[np.ndarray | None, bool]:
    """The role multipliers :func:`_about_the_user` applies to each entry (``None``:
    none), and whether the question is about the user in the first person (the
    assistant's messages at :data:`_ASSISTANT_FACTOR`)."""
    if not len(positions):
        return None, False
    about_assistant = bool(_TO_ASSISTANT.search(query))
    first_person = (
        not about_assistant
        and not _HOW_TO.search(query)
        and bool(_FIRST_PERSON.search(query) or _me_question(query))
    )
    if first_person:
        factor = _ASSISTANT_FACTOR
    elif transcript() or without_foreign_function_words(query) != query:
        # A transcript's questions name their speakers; a question in another language
        # is not read for its person at all.
        return None, False
    else:
        factor = _OTHER_SPEAKER_FACTOR
    roles = _assistant_messages(messages)
    if roles is None:  # no user message: no user to ask about
        return None, False
    ai = roles[positions.astype(np.intp)]
    if about_assistant:  # the user's own messages are not what they ask about
        return np.where(ai, 1.0, factor), False
    if not ai.any():
        return None, False
    return np.where(ai, factor, 1.0), first_person


_ASSISTANT = "assistant"


def _assistant_messages(messages: Sequence[BaseMessage]) -> np.ndarray | None:
    """Whether each message is the assistant's own words, kept with the history's view
    and extended by each turn's new messages (no pass over the history per question);
    ``None`` when no message is the user's (a transcript of named people, tool results
    and the assistant alone). A reply right after a tool's result relays what the tool
    found ("UA 1423 departs at 7:45") rather than restating the user's topic: it is not
    counted as the assistant's, and the user rule leaves it as it is."""
    view, n = view_of(messages)
    if bisect_left(view.humans, n) == 0:  # no human message below n (no copy of them)
        return None
    types = view.types
    with view.derived_lock:
        known: np.ndarray | None = view.cache.get(_ASSISTANT)
        if known is None or len(known) < n:
            start = 0 if known is None else len(known)
            tail = np.fromiter(
                (types[i] == "ai" and not (i and types[i - 1] == "tool") for i in range(start, n)),
                dtype=bool,
                count=n - start,
            )
            known = tail if known is None else np.concatenate((known, tail))
            view.cache[_ASSISTANT] = known
    return known[:n]


def _one_per_text(
    linked: dict[int, float], seeds: Collection[int], scored: _Scored
) -> dict[int, float]:
    """``linked`` with each matching sentence once: the best-ranked message holding it.

    A sentence the conversation repeats in many messages ("The venue question keeps
    getting postponed.", written into a status line every few days) links each copy to
    the one before as its change, and a chain of copies filled the context where the
    one real change was needed. A linked message whose best passage is a sentence a
    seed or better-linked message also holds adds nothing: it is not linked (it keeps its
    own score). The latest copy holds a sentence that states a change: a change restated
    in the same words ("moved to the riverside hotel" again, after a move back) is the
    current one.
    Messages matched by meaning alone (no passage) stay.
    """
    keepers = _keepers(
        _copies_of(chain(seeds, sorted(linked, key=lambda s: -linked[s])), scored), scored
    )
    return {slot: score for slot, score in linked.items() if keepers.get(slot, slot) == slot}


def _keepers(copies: dict[str, list[int]], scored: _Scored) -> dict[int, int]:
    """For each slot of ``copies`` (:func:`_copies_of`), the slot that holds its best
    sentence: the best-ranked copy (its other passages matched too), or for a sentence
    that states a change the latest (the current value)."""
    keepers: dict[int, int] = {}
    for held in copies.values():
        keeper = held[0]
        if scored.lexical.passage_has_change[int(scored.best_passage[keeper])]:
            keeper = max(held, key=lambda slot: scored.positions[slot])
        keepers.update((slot, keeper) for slot in held)
    return keepers


def _copies_of(slots: Iterable[int], scored: _Scored) -> dict[str, list[int]]:
    """``slots`` matched by a passage, grouped by their best sentence, in order."""
    index, best = scored.lexical, scored.best_passage
    copies: dict[str, list[int]] = {}
    for slot in slots:
        pid = int(best[slot])
        if pid >= 0:
            held = copies.setdefault(repeat_key(index.passage_text(pid)), [])
            if slot not in held:
                held.append(slot)
    return copies


def _states_date(text: str) -> bool:
    """Whether ``text`` holds a calendar date: a month name next to a day number ("23
    March", "the 5th of May", "May 10th"), a weekday, or a numeric date (2025-03-23,
    23/3)."""
    return _names_day(text) or bool(_NUMERIC_DATE.search(text))


def _names_day(text: str) -> bool:
    """Whether ``text`` names a day in words: a weekday, or a month name beside a day
    number."""
    tokens = tokenize(text)
    for i, token in enumerate(tokens):
        if token in DAYS and len(token) > 3:
            return True
        if token in MONTHS and len(token) >= 3:
            if token == "may" and not MAY_MONTH.search(text):
                continue  # "we may need 3 rooms": the verb, not the month
            near = tokens[max(0, i - 3) : i + 3]
            if any(t[:2].isdigit() or t[:1].isdigit() for t in near):
                return True
    return False


_TOLD_TIME = re.compile(
    r"(?i:\b(?:yesterday|(?:today|tonight)(?!['\u2019]s)"
    r"|this\s+(?:morning|afternoon|evening|week|weekend|month)"
    r"|last\s+(?:night|week|weekend|month|year|summer|winter|spring|fall|autumn)"
    r"|(?:days?|weeks?|months?|years?)\s+ago"
    r"|tomorrow|next\s+(?:week|weekend|month|year|summer|winter|spring|fall|autumn))\b)"
    r"|\b(?:[Ii]n|[Ss]ince|[Ee]arly|[Ll]ate|[Ll]ast|[Tt]his|[Nn]ext)\s+(?:January|February|March|April"
    r"|May|June|July|August|September|October|November|December)\b",
)
"""Words placing an event relative to the day it is told: "yesterday", "last week", "this
morning", "three days ago", "tomorrow", "next month", and a month after a word that makes
it one ("in June", "since March": a capital letter, so "in may cases" is no month)."""


def _tells_time(text: str) -> bool:
    """Whether ``text`` says when something happens: a weekday, a month beside a day
    number, a date with its year (2025-03-23, 23/3/2025; not "3/4 cup", "24/7" or
    "24/7/365"), "in June", or a day relative to the telling ("yesterday", "last weekend",
    "two weeks ago", "tomorrow"; not "today's special")."""
    return bool(_TOLD_TIME.search(text)) or _names_day(text) or bool(_YEAR_DATE.search(text))


def _dateline_of(text: str) -> str | None:
    """The date ``text`` opens with (:func:`opens_with_date`) with the year after it if
    any ("(2 May 2023)": "(2 may 2023"), normalized, else ``None``."""
    found = dateline_match(text)
    if found is None:
        return None
    year = _DATELINE_YEAR.match(text, found.end())
    return " ".join(f"{found.group(0)} {year.group(1) if year else ''}".lower().split())


_DATELINE_YEAR = re.compile(r"[,\s]*((?:19|20)\d\d)\b")


_NUMERIC_DATE = re.compile(r"\b(?:\d{4}-\d{1,2}-\d{1,2}|\d{1,2}/\d{1,2}(?:/\d{2,4})?)\b")
_YEAR_DATE = re.compile(r"\b(?:\d{4}-\d{1,2}-\d{1,2}|\d{1,2}/\d{1,2}/(?:\d{4}|\d{2}))\b")
"""A numeric date with its year: without one, "3/4" may be a fraction, "24/7" a rate."""


_PERIOD_BONUS = 0.5
"""A best match told within the period a question keeps to gains this share of its score."""
_PERIOD_SEEDS = 200
"""How many of the best matches are read for their date."""
_SEASONS = {
    "spring": (3, 4, 5),
    "summer": (6, 7, 8),
    "autumn": (9, 10, 11),
    "fall": (9, 10, 11),
    "winter": (12, 1, 2),
}
_AFTER_PERIOD = (
    r"(?=\s*(?:$|[?!.,;:)]|(?:19|20)\d\d\b|(?:and|or|to|through|when|while|with|at|on|"
    r"for|before|after|did|does|do|was|were|is|are|has|have|had|this|last|next|that|"
    r"compared|versus|vs)\b))"
)
"""What may follow a period's month, season or year: the question goes on, another
period follows, or it ends. "the fall of Rome", "spring rolls", "June's class", "2000
people" are no periods."""
_PART = (
    r"(?:(?i:early|late|mid)[- ]?)?(?:(?i:spring|summer|autumn|fall|winter)|May|"
    + "|".join(m.capitalize() for m in MONTHS if len(m) > 3)
    + r")\b(?!['\u2019])"
)
_PERIOD = re.compile(
    r"\b(?P<lead>[Ii]n|[Dd]uring|[Tt]hroughout|[Ff]rom|[Bb]etween)\s+(?:the\s+)?"
    rf"(?:(?P<parts>{_PART}(?:\s*(?:,|and|or|to|through|until)\s+(?:the\s+)?{_PART})*)"
    + _AFTER_PERIOD
    + r"(?:\s*,?\s*(?:of\s+)?(?P<year>(?:19|20)\d\d)\b"
    + _AFTER_PERIOD
    + ")?"
    r"|(?:(?i:early|late|mid)[- ]?)?(?P<only_year>(?:19|20)\d\d)\b" + _AFTER_PERIOD + ")"
)
_PERIOD_WORD = re.compile(r"[A-Za-z]+")
_RANGE_JOIN = re.compile(r"\b(?:to|through|until)\b")
_DATELINE_MONTH = re.compile(r"[a-z]+")
_DATELINE_YEAR4 = re.compile(r"\b((?:19|20)\d\d)\b")
_ISO_MONTH = re.compile(r"\b((?:19|20)\d\d)-(\d{1,2})-\d{1,2}\b")


def _months_of(word: str) -> tuple[int, ...]:
    lower = word.lower()
    if lower in _SEASONS:
        return _SEASONS[lower]
    if word == "May" or (lower in MONTHS and len(word) > 3 and word[0].isupper()):
        return (MONTHS[lower],)
    return ()


def _period(query: str) -> tuple[int, frozenset[int]] | None:
    """The period a question keeps to ("in June", "during summer 2023", "in 2022"):
    (year or 0, months or empty for the whole year); ``None`` without one.

    A month is read with its capital ("in may cases" names none), a season in any case;
    seasons are the northern hemisphere's. Several ("in autumn and winter 2023", "in
    June or July") make one period of all their months; a range ("from June to August",
    "between March and May", "in June through August") of the months between too. What
    follows must let the period end there (:data:`_AFTER_PERIOD`): "in the fall of
    Rome", "in the spring roll recipe", "in June's class", "in 2000 words" name none. A
    year after "during" or "throughout" alone, or "early" / "late" / "mid" before it,
    is a year; only the first period of the question is read.

    Example:
        >>> _period("When did Melanie go camping in June?")
        (0, frozenset({6}))
        >>> _period("How many times has she gone to the beach in 2023?")
        (2023, frozenset())
        >>> _period("What is in the box?") is None
        True
    """
    for found in _PERIOD.finditer(query):
        only_year = found.group("only_year")
        if only_year:
            return (int(only_year), frozenset())
        parts = found.group("parts") or ""
        words = [_months_of(word) for word in _PERIOD_WORD.findall(parts)]
        named = [months for months in words if months]
        if not named:
            continue
        months = {m for group in named for m in group}
        ranged = found.group("lead").lower() in ("from", "between") or _RANGE_JOIN.search(parts)
        if ranged and len(named) == 2:
            first, last = named[0][0], named[1][-1]
            months.update((first - 1 + k) % 12 + 1 for k in range((last - first) % 12 + 1))
        year = found.group("year")
        return (int(year) if year else 0, frozenset(months))
    return None


def _dated_month(dateline: str) -> tuple[int, int] | None:
    """(year or 0, month) of a normalized dateline (:func:`_dateline_of`); ``None`` for a
    numeric date other than ISO's ("3/6/2023": the day or the month first?)."""
    iso = _ISO_MONTH.search(dateline)
    if iso:
        return int(iso.group(1)), int(iso.group(2))
    month = next((MONTHS[w] for w in _DATELINE_MONTH.findall(dateline) if w in MONTHS), None)
    if month is None:
        return None
    year = _DATELINE_YEAR4.search(dateline)
    return (int(year.group(1)) if year else 0, month)


def _in_period(
    query: str,
    fused: np.ndarray,
    index: IndexHead,
    entries: Sequence[IndexEntry],
    messages: Sequence[BaseMessage],
) -> np.ndarray:
    """Scores with the best matches told within the period the question keeps to raised.

    "When did Melanie go camping in June?" when she went in June and in July; "How many
    times has Melanie gone to the beach in 2023?": one of the :data:`_PERIOD_SEEDS` best
    matches dated (by its own dateline, or its sitting's within
    :data:`_DATELINE_LOOKBACK` messages, never across an empty message: scoped recall's
    break between threads) within the period gains :data:`_PERIOD_BONUS` of its score.
    Only in a history with datelines (two at least); a dateline without a year is not
    within a period of a given year. No score is lowered (an event is often told after
    its month: "we went camping last month"), but the cut-off is a share of the best
    score, so a match left unraised may fall below it.
    """
    period = _period(query)
    if period is None:
        return fused
    datelines = index.datelines()
    if int(datelines.sum()) < _DATELINE_HABIT:
        return fused
    year, months = period
    raised = fused.copy()
    # The nearest dateline at or above each message, in one pass.
    above = np.maximum.accumulate(np.where(datelines, np.arange(len(datelines)), -1))
    told: dict[int, bool] = {}  # per dateline: within the period
    for slot in _top(fused, _PERIOD_SEEDS).tolist():
        back = int(above[slot])
        if fused[slot] <= 0 or back < 0 or slot - back > _DATELINE_LOOKBACK:
            continue
        if any(
            not message_text(messages[entries[between].id]).strip()
            for between in range(back + 1, slot)
        ):
            continue  # another thread's records lie above
        within = told.get(back)
        if within is None:
            dateline = _dateline_of(message_text(messages[entries[back].id]))
            month = _dated_month(dateline) if dateline else None
            within = told[back] = month is not None and not (
                (months and month[1] not in months) or (year and month[0] != year)
            )
        if within:
            raised[slot] = fused[slot] * (1 + _PERIOD_BONUS)
    return raised


def _top(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest ``values`` (unordered; a partial sort)."""
    if len(values) <= k:
        return np.arange(len(values))
    return np.argpartition(-values, k)[:k]


def _copy_key(entry: IndexEntry, messages: Sequence[BaseMessage]) -> str:
    """Equal for copies of one text: the content hash (role and text), else the text."""
    return entry.content_hash or repeat_key(message_text(messages[entry.id]))


def _first_copies(
    slots: list[int], entries: Sequence[IndexEntry], messages: Sequence[BaseMessage]
) -> list[int]:
    """``slots`` with each text once: the first (best-ranked) copy of a repeat stays."""
    seen: set[str] = set()
    kept = []
    for slot in slots:
        key = _copy_key(entries[slot], messages)
        if key not in seen:
            seen.add(key)
            kept.append(slot)
    return kept


_RECURRING_COPIES = 3
"""Matches holding one best sentence for it to be a recurring line (see :func:`_repeating`)."""


def _repeating(slots: Sequence[int], scored: _Scored) -> set[int]:
    """The matches among ``slots`` whose best passage repeats a later match's.

    A match whose best passage is a sentence another match also holds (a recurring
    line: "Comparing the total cost over a contract term..." in every reply on money)
    was ranked for a sentence the context already holds. Such a match is a spare
    candidate (taken only while the context stays small) and brings no exchange, so
    that on a long history twelve messages holding one status line ("I looked at venues
    for the retreat, nothing is decided") do not fill the budget before the one message
    that answers. The best-ranked copy holds the sentence (``slots`` come best first), the
    latest one a sentence that states a change (a change restated in the same words is
    the current one). A sentence is a
    recurring line when at least :data:`_RECURRING_COPIES` matches hold it: two updates
    opening with the same line ("Quick update on the budget for Project Willow.") are
    a statement and its change, both needed ("by how much did it go up?"). Messages
    matched by meaning alone (no passage) are never repeats.
    """
    copies = _copies_of(slots, scored)
    keepers = _keepers(copies, scored)
    repeats: set[int] = set()
    for held in copies.values():
        if len(held) >= _RECURRING_COPIES:
            repeats.update(slot for slot in held if slot != keepers[slot])
    return repeats


def _rescaled(
    values: np.ndarray, echoes: np.ndarray, spread: Callable[[float], float]
) -> np.ndarray:
    """``values`` divided by ``spread(top)``, clipped to 0..1; echoes never set the top,
    unless nothing else matches (then the earlier copy of the question still ranks, at
    the echo's share, and hands its score to the reply it got)."""
    rest = values if not echoes.size else np.delete(values, echoes)
    top = float(rest.max()) if rest.size else 0.0
    if top <= 0 and echoes.size:
        top = float(values[echoes].max())
    if top <= 0:
        return np.zeros(len(values), dtype=np.float64)
    result: np.ndarray = np.clip(values / spread(top), 0.0, 1.0)
    return result


class LocalSelector:
    """Ranks index entries for a query without calling a model.

    Lexical relevance is BM25 over passages of each message's full text (a message
    scores by its best passage, so one stating sentence inside a long message is
    found). When entries carry embedding vectors and an ``embeddings`` model embeds
    the query, cosine similarity is fused in. The ranking is cut adaptively (a share
    of the best score, at most ``max_selected``) and expanded along dependencies:

    - a later message whose matching passage changes what a selected passage stated
      (same query terms, a change cue such as "instead" or "moved to"), and the
      earlier statement a selected change refers to;
    - the neighbours of a selected message too short to stand alone (the question
      an answer replies to).

    Tool exchanges are kept whole later, by hydration. The returned ids are ordered
    by priority, so a token budget drops the least relevant first.

    Args:
        max_selected: Upper bound on primary selections for one query.
        embeddings: Embeds the query; only entries whose ``vector`` was made by the
            same model (``vector_model``) are compared with it (the indexer records
            the model when given the same embeddings).
    """

    def __init__(self, *, max_selected: int = 16, embeddings: Embeddings | None = None) -> None:
        self.max_selected = max_selected
        self.embeddings = embeddings
        self._query_model = embedding_model_id(embeddings) if embeddings is not None else None
        self._profile = EmbeddingProfile.of(embeddings)

    # -- scoring --------------------------------------------------------------------

    def _score(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        query_vector: Sequence[float] | None,
    ) -> _Scored:
        query = _question(query)
        index, positions = _lexical(messages, entries)
        related = None
        if self._profile.static_words:
            related = _static_related(query, index)
        elif self._profile.related_words and self.embeddings is not None and query_vector:
            embeddings = self.embeddings
            related = self._embedded(
                lambda: related_words(embeddings, self._query_model or "", query, index)
            )
        # A role the question uses ("my husband") brings the name the history gives it
        # ("my husband Javier"): the answer may say only "Javier".
        roles = names_by_role(query, index)
        # A phrase the history shortens ("physical therapy" -> "PT") brings the letters.
        roles.update(
            (short, max(roles.get(short, 0.0), weight))
            for short, weight in initialisms(query, index).items()
        )
        if roles:
            related = dict(related or {})
            for name, weight in roles.items():
                related[name] = max(related.get(name, 0.0), weight)
        raw, best = index.score_passages(query, related, exchanges=True)
        cosines = self._cosines(query_vector, index)
        # Filler ("Noted.", "Reply 8.") carries nothing on its own: it scores zero and
        # sets no scale (it still travels with its exchange, by hydration).
        filler = index.filler()
        raw[filler] = 0.0
        echoes, asked_again = self._echoes(query, raw, cosines, entries, messages, index, best)
        fused = _rescaled(raw, echoes, lambda top: top)
        if cosines is not None:
            # Cosines count from the typical message up (or from chance, in a history
            # too short to have a typical message), over at least a minimum spread: a top
            # that barely stands out (a model that does not know the language, a query
            # about nothing here) is not stretched to full weight.
            usable = cosines[~filler]
            floor = float(np.median(usable)) if usable.size else 0.0
            if usable.size < _TYPICAL_SAMPLE and self.embeddings is not None and query_vector:
                q = np.asarray(query_vector, dtype=np.float32)
                unit = q / max(float(np.linalg.norm(q)), 1e-12)
                embeddings = self.embeddings
                chance = self._embedded(
                    lambda: chance_level(embeddings, self._query_model or "", unit)
                )
                if chance is not None:  # else the median, as in a longer history
                    floor = chance[0] + chance[1]
            centred = np.where(filler, 0.0, cosines - floor)
            semantic = _rescaled(centred, echoes, lambda top: max(top, _MIN_SEMANTIC_SPREAD))
            weight = self._profile.semantic_weight
            fused = (1 - weight) * fused + weight * semantic
        fused = _in_period(query, fused, index, entries, messages)
        fused, named, asked = _about_speaker(query, fused, index)
        weights = link_weights = None
        if named < 0:
            weights, first_person = _user_weights(
                query, positions, messages, lambda: _transcript_people(index) is not None
            )
            if weights is not None:
                fused = fused * weights
                link_weights = weights if first_person else None
        echo_scores = fused[echoes].copy()
        if echoes.size:
            fused[echoes] *= _ECHO_FACTOR
        if len(entries) > 1:
            # Among equally relevant messages the later one is the current truth.
            fused = fused + _RECENCY_BONUS * (fused > 0) * positions / max(positions.max(), 1.0)
        again = [(slot, float(fused[slot])) for slot in asked_again]
        return _Scored(
            fused,
            index,
            best,
            cosines,
            echoes,
            echo_scores,
            again,
            positions,
            named,
            asked,
            link_weights,
        )

    def _cosines(self, query_vector: Sequence[float] | None, index: IndexHead) -> np.ndarray | None:
        """Each message's best passage cosine with the query (``None`` without a model).

        Passages are embedded with the selector's model (cached with the lexical index),
        so a fact stated in one sentence of a long message is compared on its own.
        """
        if query_vector is None or self.embeddings is None or self._query_model is None:
            return None
        q = np.asarray(query_vector, dtype=np.float32)
        norm = float(np.linalg.norm(q))
        if norm == 0 or len(index) == 0:
            return None
        embeddings, model = self.embeddings, self._query_model
        vectors = self._embedded(
            lambda: index.passage_vectors(embeddings, model, self._profile.unit_words)
        )
        if vectors is None:
            return None  # no passage vectors this turn: lexical ranking alone
        matrix, owner = vectors
        if matrix.shape[1] != q.shape[0]:
            return None  # a query vector of another model: never compared
        sims = dot_rows(matrix, q / norm)
        best = index.doc_max(sims, owner)
        best[~np.isfinite(best)] = float(np.min(sims)) if sims.size else 0.0
        return best.astype(np.float64)

    @staticmethod
    def _echoes(
        query: str,
        raw: np.ndarray,
        cosines: np.ndarray | None,
        entries: Sequence[IndexEntry],
        messages: Sequence[BaseMessage],
        index: IndexHead,
        best: np.ndarray,
    ) -> tuple[np.ndarray, list[int]]:
        """Slots of earlier messages that ask what the query asks (they answer nothing),
        and of longer ones that ask it in the sentence they match by ("You, Jon? What do
        you have going for your dance studio?" after other news): the user asking again
        with more around it, which may say something too.

        Only the few best matches by either score are read: an echo of the query is
        always among them.
        """
        terms = frozenset(content_terms(query))
        names = specific_terms(query)
        key = repeat_key(query)
        heads = [_top(raw, _ECHO_CHECKED)]
        if cosines is not None:
            heads.append(_top(cosines, _ECHO_CHECKED))
        found, again = [], []
        for slot in dict.fromkeys(int(i) for head in heads for i in head):
            message = messages[entries[slot].id]
            text = message_text(message)
            # The earlier question read as the query is (its hedges and words about the
            # conversation out): "Is Noor the sort of person who flies?" asked again is
            # read "Is Noor flies?", and its earlier copy must still be its echo.
            read = _question(text) if len(text) <= _ECHO_TEXT_CHARS else text
            if repeat_key(read) == key or is_echo(read, terms):
                found.append(slot)
            elif best[slot] >= 0 and asks_again(
                text,
                index.passage_text(int(best[slot])),
                terms,
                names,
                assistant=message.type == "ai",
            ):
                again.append(slot)
        return np.asarray(sorted(found), dtype=np.int64), again

    def scores(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        query_vector: Sequence[float] | None = None,
    ) -> np.ndarray:
        """Fused relevance (about 0..1) of every entry, aligned with ``entries``.

        The query is embedded with the selector's model when no ``query_vector`` is
        given, as :meth:`select` and :meth:`rank` do.
        """
        if not entries:
            return np.zeros(0)
        if query_vector is None:
            query_vector = self._query_vector(query)
        return self._score(query, messages, entries, query_vector).fused

    def warm(self, messages: Sequence[BaseMessage], entries: Sequence[IndexEntry]) -> None:
        """Build the lexical view and embed the passages of ``entries`` ahead of a query.

        Selection does this on demand; calling it after indexing (in the background)
        moves the cost of embedding new passages off the next user turn. An embedding
        failure is raised here (the indexer reports it in ``indexing_errors``), unlike
        in selection, which goes on lexically.
        """
        if not entries:
            return
        index, _ = _lexical(messages, entries)
        if self.embeddings is not None and self._query_model is not None:
            index.passage_vectors(self.embeddings, self._query_model, self._profile.unit_words)
            if self._profile.related_words:
                # The history's new words' vectors (related words are found among them).
                learn_words(*self._profile.word_model(self.embeddings, self._query_model), index)
            background_vectors(self.embeddings, self._query_model)

    def evidence(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        query_vector: Sequence[float] | None = None,
    ) -> Evidence:
        """What each entry can prove for ``query``, aligned with ``entries``.

        The best passage's cosine is compared with the query's cosine to unrelated
        everyday lines (see :mod:`langgraph_librarian.select._evidence`), in standard
        deviations; sharing a rare query word is lexical evidence. Echoes of the query
        and filler are marked unusable: they can never carry evidence.
        """
        if query_vector is None:
            query_vector = self._query_vector(query)
        if not entries:
            return self._weighed(query, None, query_vector)
        return self._weighed(
            query, self._score(query, messages, entries, query_vector), query_vector
        )

    def weigh(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        *,
        query_vector: Sequence[float] | None = None,
        exclude: Collection[int] = (),
    ) -> tuple[Selection, Evidence]:
        """:meth:`select` and :meth:`evidence` from one scoring pass (scoped recall
        needs both: the selection, and whether anything bears on the query at all)."""
        if query_vector is None:
            query_vector = self._query_vector(query)
        if not entries:
            return self._select(query, messages, entries, exclude, query_vector), self._weighed(
                query, None, query_vector
            )
        scored = self._score(query, messages, entries, query_vector)
        selection = self._select(query, messages, entries, exclude, query_vector, scored)
        return selection, self._weighed(query, scored, query_vector)

    def _weighed(
        self, query: str, scored: _Scored | None, query_vector: Sequence[float] | None
    ) -> Evidence:
        query = _question(query)
        n = 0 if scored is None else len(scored.fused)
        evidence = Evidence(
            np.zeros(n), np.zeros(n, dtype=bool), np.ones(n, dtype=bool), np.zeros(n, dtype=bool)
        )
        if scored is None:
            return evidence
        if scored.cosines is not None and self.embeddings is not None and self._query_model:
            q = np.asarray(query_vector, dtype=np.float32)
            embeddings, model = self.embeddings, self._query_model
            chance = self._embedded(lambda: chance_level(embeddings, model, q / np.linalg.norm(q)))
            if chance is not None:  # else unmeasured: lexical evidence alone
                mean, std = chance
                evidence.semantic = (scored.cosines - mean) / std
                evidence.measured = True
        terms = frozenset(content_terms(query))
        rare = informative_terms(query)
        index = scored.lexical
        evidence.corroborated = np.zeros(n, dtype=bool)
        for slot in range(n):
            common = terms & frozenset().union(
                *(index.passage_terms[p] for p in index.doc_passages(slot))
            )
            evidence.lexical[slot] = shares_evidence(common, terms, rare)
            evidence.strong[slot] = bool(terms) and (common == terms or len(common & rare) >= 2)
            evidence.corroborated[slot] = corroborates(common, rare, terms)
        evidence.usable &= ~index.filler()
        evidence.usable[scored.echoes] = False
        return evidence

    def rank(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        *,
        exclude: Collection[int] = (),
        query_vector: Sequence[float] | None = None,
    ) -> list[tuple[int, float]]:
        """``(position, score)`` of every entry with a positive score, best first.

        The scores are :meth:`select`'s: the query is embedded with the selector's model
        when no ``query_vector`` is given (without it, only the lexical half would rank,
        and a message that shares no word with the query would never appear).
        """
        if not entries:
            return []
        if query_vector is None:
            query_vector = self._query_vector(query)
        return self._ranked(query, messages, entries, exclude, query_vector)

    async def arank(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        *,
        exclude: Collection[int] = (),
        query_vector: Sequence[float] | None = None,
    ) -> list[tuple[int, float]]:
        """Async twin of :meth:`rank` (embeds the query asynchronously)."""
        if not entries:
            return []
        if query_vector is None:
            query_vector = await self._aquery_vector(query)
        return self._ranked(query, messages, entries, exclude, query_vector)

    def _ranked(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        exclude: Collection[int],
        query_vector: Sequence[float] | None,
    ) -> list[tuple[int, float]]:
        scored = self._score(query, messages, entries, query_vector)
        fused = scored.fused
        order = np.argsort(-fused, kind="stable")
        order = order[fused[order] > 0]
        if exclude:
            order = order[~np.isin(scored.positions[order], list(set(exclude)))]
        positions = [entries[i].id for i in order.tolist()]
        return list(zip(positions, fused[order].tolist(), strict=True))

    # -- selection ------------------------------------------------------------------

    def _embedded(self, call: Callable[[], _T]) -> _T | None:
        """``call()`` (a call of the embedding model), or ``None`` when the model failed.

        The embedding model only refines the lexical ranking, so its failure (a server
        down, a timeout, a broken local model) leaves this turn's ranking lexical instead
        of failing the turn; :func:`embedding_failed` records and logs it, and raises what
        only the user can fix (a refused key). Once failed, it is not asked again this turn.
        """
        if embeddings_down():
            return None
        try:
            return call()
        except Exception as exc:
            embedding_failed(logger, exc, self.embeddings)
            return None

    def _query_vector(self, query: str) -> list[float] | None:
        # Every reading of the query is capped where it happens (_score, _select,
        # _weighed, here): the LLM selector and recall call these directly.
        query = _question(query)
        embeddings = self.embeddings
        if embeddings is None or not query.strip():
            return None
        vector = self._embedded(lambda: list(embeddings.embed_query(query)))
        if vector is not None:  # the model answered (a failure before is over)
            embedding_answered(logger, embeddings)
        return vector

    async def _aquery_vector(self, query: str) -> list[float] | None:
        query = _question(query)
        if self.embeddings is None or not query.strip() or embeddings_down():
            return None
        try:
            vector = list(await self.embeddings.aembed_query(query))
        except Exception as exc:
            embedding_failed(logger, exc, self.embeddings)
            return None
        embedding_answered(logger, self.embeddings)
        return vector

    def select(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        *,
        exclude: Collection[int] = (),
        config: RunnableConfig | None = None,
    ) -> Selection:
        """Select entries for ``query``; positions in ``exclude`` are never returned.

        ``config`` is accepted for the :class:`~langgraph_librarian.select.Selector`
        protocol; the local selector makes no model calls.
        """
        query = self._spelled(query, messages, entries)
        return self._by_parts(query, messages, entries, exclude, None)

    async def aselect(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        *,
        exclude: Collection[int] = (),
        config: RunnableConfig | None = None,
    ) -> Selection:
        """Async twin of :meth:`select` (embeds the query asynchronously)."""
        query = self._spelled(query, messages, entries)
        return await self._aby_parts(query, messages, entries, exclude, None)

    def _by_parts(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        exclude: Collection[int],
        vector: Sequence[float] | None,
    ) -> Selection:
        """:meth:`_select`, for each part of a question asking several things at once
        (:func:`_question_parts`), the parts' picks merged (:func:`_merged`). ``vector``
        is the whole query's embedding when the caller has it (used for a one-part
        query; ``None``: embedded here)."""
        parts = _question_parts(query)
        vectors: list[Sequence[float] | None]
        if len(parts) == 1 and vector is not None:
            vectors = [vector]
        else:
            vectors = [self._query_vector(p) for p in parts]
        return self._parts_selected(parts, vectors, messages, entries, exclude)

    async def _aby_parts(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        exclude: Collection[int],
        vector: Sequence[float] | None,
    ) -> Selection:
        """Async twin of :meth:`_by_parts` (embeds the parts asynchronously)."""
        parts = _question_parts(query)
        vectors: list[Sequence[float] | None]
        if len(parts) == 1 and vector is not None:
            vectors = [vector]
        else:
            vectors = [await self._aquery_vector(p) for p in parts]
        return self._parts_selected(parts, vectors, messages, entries, exclude)

    def _parts_selected(
        self,
        parts: Sequence[str],
        vectors: Sequence[Sequence[float] | None],
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        exclude: Collection[int],
    ) -> Selection:
        """The selection for each part with its embedding, merged when there are several."""
        selections = [
            self._select(p, messages, entries, exclude, v)
            for p, v in zip(parts, vectors, strict=True)
        ]
        return selections[0] if len(selections) == 1 else _merged(selections)

    @staticmethod
    def _spelled(query: str, messages: Sequence[BaseMessage], entries: Sequence[IndexEntry]) -> str:
        """``query`` with its typos read as the history's words (:func:`_spelled`)."""
        if not entries:
            return query
        index, _ = _lexical(messages, entries)
        return _spelled(query, index)

    def _select(
        self,
        query: str,
        messages: Sequence[BaseMessage],
        entries: Sequence[IndexEntry],
        exclude: Collection[int],
        query_vector: Sequence[float] | None,
        scored: _Scored | None = None,
    ) -> Selection:
        query = _question(query)
        excluded = set(exclude)
        if not entries:
            return Selection(ids=[], reasoning="empty index", strategy="local")
        if scored is None:
            scored = self._score(query, messages, entries, query_vector)
        fused = scored.fused
        positive = np.flatnonzero(fused > 0)
        if excluded:
            positive = positive[~np.isin(scored.positions[positive], list(excluded))]
        # Only the head of the ranking is read (expansion pool, bridges, primaries and
        # the reserve, which stops at its floor): sort that head, not every message.
        head = _best_first(fused, positive, 2 * _EXPANSION_POOL + 4 * self.max_selected)
        answered = self._answered(fused, head, scored, entries, messages, excluded)
        restated, promoted = self._restated(
            query,
            fused if answered is None else answered,
            head,
            scored,
            entries,
            messages,
            excluded,
        )
        answered = answered if restated is None else restated
        if answered is not None:
            # The replies to the best-matching questions rank with them, the statements
            # the best-matching replies react to with those: sort again.
            scored = replace(scored, fused=answered)
            fused = answered
            positive = np.flatnonzero(fused > 0)
            if excluded:
                positive = positive[~np.isin(scored.positions[positive], list(excluded))]
            head = _best_first(fused, positive, 2 * _EXPANSION_POOL + 4 * self.max_selected)
        order: list[int] = self._distinct(head.tolist(), entries, messages)
        filler = scored.lexical.filler()
        if not order:
            return Selection(
                ids=[],
                reasoning="no index entry is related to the query",
                strategy="local",
                candidates=len(entries),
            )
        top = float(fused[order[0]])
        primary = [i for i in order[: self.max_selected] if fused[i] >= RELATIVE_CUTOFF * top]
        chosen = set(primary)
        priority: dict[int, float] = {i: float(fused[i]) for i in primary}
        linked = self._linked(
            query, priority, order[:_EXPANSION_POOL], scored, entries, messages, excluded
        )
        # For a question about the user in the first person, a link or completion keeps
        # the role weight of the message it brings (the assistant's reply bridged from
        # the user's match counts as the assistant's own match does). Not for a question
        # in the third person: the assistant's messages there keep most of their score,
        # and a fact the assistant stated is reached through a link (the second half of
        # "who leads Blue Atlas, and what is Wen allergic to?").
        weights = scored.weights
        for i, score in linked.items():
            if weights is not None:
                score *= float(weights[i])
            priority[i] = max(priority.get(i, 0.0), score)
        # What completes the best matches: a name's other mentions, a hop, the date an
        # event is relative to, the sitting's dateline, the assistant's reply, the reply
        # of the speaker a question names, a later change.
        completions = chain(
            self._bridged(query, order, scored, entries, messages, excluded).items(),
            self._hopped(query, order, scored, entries, excluded).items(),
            self._anchored(query, order, primary, scored, entries, excluded).items(),
            self._dated(query, order, primary, scored, entries, messages, excluded),
            self._told_when(query, order, primary, scored, entries, messages, excluded),
            self._coinciding(query, order, primary, scored, entries, excluded),
            self._replied(query, order, chosen, scored, entries, messages, excluded),
            self._voiced(order, chosen, scored, entries, excluded),
            self._changed(query, order, primary, scored, entries, messages, excluded),
            self._replaced(query, order, primary, scored, entries, messages, excluded),
        )
        # What the user said they cannot have, for a question asking for a go-ahead. Not
        # "reached": scoped recall does not take it as bearing on the question (its own
        # score, zero or low, meets recall's floor or not).
        for i, score in self._constraints(query, order, scored, entries, messages, excluded):
            priority[i] = max(priority.get(i, 0.0), score)
        # What was reached through the best matches (scoped recall keeps it under its
        # floor, as it keeps a linked change).
        reached: set[int] = set()
        for i, score in completions:
            if weights is not None:
                score *= float(weights[i])
            priority[i] = max(priority.get(i, 0.0), score)
            reached.add(i)

        positions = scored.positions
        slot_at: dict[float, int] = {}
        # Entries in message order (as the turn gives them: one per message) are found
        # by bisection; a dict of every position, built at the first call, took 2.6 ms
        # at 50,000 messages, and is kept for short or unordered lists (a few dozen
        # calls a turn, each a NumPy search, cost more than the dict of a short list).
        ordered = len(positions) > _SLOT_DICT_MAX and bool(np.all(positions[1:] > positions[:-1]))

        def slot_of(position: int) -> int | None:
            if ordered:
                i = int(np.searchsorted(positions, position))
                return i if i < len(positions) and positions[i] == position else None
            # The last entry at that position.
            if not slot_at and len(positions):
                slot_at.update(zip(positions.tolist(), range(len(positions)), strict=True))
            return slot_at.get(position)

        # A question asking for a list or a count ("What activities does Melanie do?",
        # "How many times...") is answered by many matches, each on its own: the
        # short matches' neighbours come after the next-best matches instead of before
        # them, so the budget holds more distinct matches.
        listing = bool(_LIST_QUESTION.search(query))
        when = bool(WHEN_QUESTION.search(query))
        neighbours: dict[int, float] = {}
        later: set[int] = set()  # neighbours only dated matches bring (see below)
        first: set[int] = set()  # neighbours something else wants ahead
        # Exchanges kept by structure, whatever the length of the match: the bare answer
        # ("4", "grey") to a question a selected message asks, and the user message one
        # of the best long assistant replies reacts to, come right after the selection
        # (ordered by a neighbour's share of their match's score): they take only room
        # the selection left, before the next-best candidates, and never push a selected
        # match out.
        kept: dict[int, float] = {}
        seeds = set(order[:_EXCHANGE_SEEDS])
        speakers, _ = scored.lexical.speakers()
        group = _group_chat(speakers[-_STYLE_SAMPLE:])
        # Only matches ranked by their own score (the primaries) move; a bridged or
        # linked message is there for another reason.
        repeating = _repeating(primary, scored)
        for i in primary:
            if i in repeating or i in promoted:
                # (A statement ranked by the reply reacting to it has that reply for its
                # exchange: the message before it is another topic.)
                continue
            pos = entries[i].id
            text = message_text(messages[pos])
            short = _word_count(text) < _SHORT_MESSAGE_WORDS
            if short:
                near_by = self._exchange(pos, text, messages)
                if group:
                    near_by.extend(_group_replies(i, pos, speakers, slot_of, messages))
            else:
                near_by = self._long_exchange(pos, text, messages, answered=i in seeds)
            # For a question asking when, a match saying when itself is the answer: its
            # exchange waits with the next-best matches, which may be the other event a
            # question relates it to or the report of a plan (blind transcripts telling
            # time in many ways: "I started on Monday").
            waits = later if when and short and _tells_time(without_dateline(text)) else first
            for near in near_by:
                slot = slot_of(near)
                if slot is None or near in excluded or slot in priority:
                    continue
                # Whether it is a bare answer matters only for filler (kept only then)
                # and for a short match's exchange under a list question: asked only
                # there (it tokenizes the reply).
                bare = (filler[slot] or (short and listing)) and self._bare_answer(near, messages)
                if filler[slot] and not bare:
                    continue
                # A short match's exchange ranks with the selection as before; a bare
                # answer to a count or list question is not left to the reserve.
                into = neighbours if short and not (bare and listing) else kept
                into[slot] = max(into.get(slot, 0.0), _NEIGHBOUR_FACTOR * fused[i])
                if into is neighbours:
                    waits.add(slot)
        # An earlier copy of the question was answered then ("What book did you suggest
        # for my flight?" after "Any book suggestions for a long flight?" / "Try
        # 'Circe'..."): the echo itself is demoted, and hands the score it had to the
        # reply that follows it, which often shares no word with the question.
        askings = chain(
            zip(scored.echoes.tolist(), scored.echo_scores.tolist(), strict=True),
            scored.asked_again,
        )
        for slot, before in askings:
            if before < RELATIVE_CUTOFF * top:
                continue
            asked = entries[slot].id
            # In a group everyone asked may answer ("Who's up for the landlord call?" /
            # "I'll ring him tomorrow"), each in a message of their own, and all of them
            # are people's messages of one type: the replies are told by their speaker.
            replies = _group_replies(slot, asked, speakers, slot_of, messages) if group else []
            for after in replies or [asked + 1]:
                reply = slot_of(after)
                if (
                    reply is not None
                    and after not in excluded
                    and reply not in priority
                    and not filler[reply]
                    and (
                        int(speakers[reply]) != int(speakers[slot])
                        if group
                        else messages[after].type != messages[asked].type
                    )
                ):
                    score = _NEIGHBOUR_FACTOR * before
                    neighbours[reply] = max(neighbours.get(reply, 0.0), score)
                    first.add(reply)  # the answer an earlier copy of the question got
        later -= first
        if not listing:
            for i, score in neighbours.items():
                if i not in later:
                    priority.setdefault(i, score)
        ranked = _first_copies(
            sorted(priority, key=lambda i: (-priority[i], -entries[i].id)), entries, messages
        )
        echoed = [i for i in ranked if i in repeating]
        ranked = [i for i in ranked if i not in repeating]
        tail = [
            i for i in sorted(kept, key=lambda i: (-kept[i], -entries[i].id)) if i not in priority
        ]
        ids = [entries[i].id for i in chain(ranked, tail)]
        # Next-best candidates, for a budget the selection leaves unused: questions whose
        # evidence is spread thin (lists, aggregates) gain from them; an unbounded
        # context never takes them.
        floor = _RESERVE_CUTOFF * top
        reserve_cap = self.max_selected * (2 if listing else 1)
        lexical, best = scored.lexical, scored.best_passage

        def best_sentence(slot: int) -> str | None:
            pid = int(best[slot])
            return repeat_key(lexical.passage_text(pid)) if pid >= 0 else None

        # Past the reserve, further down the same ranking: spare candidates, which a
        # budget takes only while the context stays small (one strong match in a chat
        # of short messages leaves the list items and the later changes below the
        # reserve's floor, with most of the budget unused). One pass, best first.
        reserve: list[int] = []
        reserve_tokens = 0
        spare: list[int] = []
        taken = {_copy_key(entries[i], messages) for i in chain(ranked, tail, echoed)}
        # A candidate ranked for a sentence the context already holds (the same line in
        # many messages) adds nothing here: it waits behind the other spare candidates.
        said = {k for k in map(best_sentence, chain(ranked, tail)) if k is not None}
        repeats: list[int] = []
        rest = _rest_of_ranking(fused, positive, len(head))
        for i in chain(order, rest):
            if fused[i] < _SPARE_CUTOFF * top or len(spare) >= _SPARE_FACTOR * self.max_selected:
                break
            key = _copy_key(entries[i], messages)
            if i in priority or key in taken:
                continue
            taken.add(key)
            sentence = best_sentence(i)
            if sentence is not None:
                if sentence in said:
                    if len(repeats) < _SPARE_FACTOR * self.max_selected:
                        repeats.append(i)
                    continue
                said.add(sentence)
            if fused[i] >= floor and (
                len(reserve) < reserve_cap or reserve_tokens < reserve_cap * _RESERVE_TOKENS
            ):
                reserve.append(i)
                # An entry that does not know its size counts as an average one.
                size = entries[i].original_tokens
                reserve_tokens += size if size > 0 else _RESERVE_TOKENS
            else:
                spare.append(i)
        reserve_ids = [entries[i].id for i in reserve]
        spare = [*echoed, *spare, *repeats]
        flow_ids = self._flow(
            ranked,
            tail,
            reserve_ids,
            fused,
            entries,
            messages,
            speakers,
            filler,
            positions,
            excluded,
        )
        if listing or later:
            held = set(reserve_ids)
            reserve_ids.extend(
                entries[i].id
                for i in sorted(neighbours, key=lambda i: -neighbours[i])
                if i not in priority and entries[i].id not in held
            )
        expanded = [entries[i].id for i in chain(ranked, tail) if i not in chosen]
        reasoning = (
            f"passage-level hybrid ranking over {len(entries)} entries: {len(primary)} at or "
            f"above {RELATIVE_CUTOFF:.0%} of the best score; {len(linked)} linked as earlier "
            f"statements or later changes; {len(neighbours)} neighbours of short messages; "
            f"{len(tail)} exchanges kept by structure; {len(reserve)} next-best and "
            f"{len(spare)} spare candidates for an unused budget"
        )
        return Selection(
            ids=ids,
            reasoning=reasoning,
            strategy="local",
            candidates=len(entries),
            expanded_ids=expanded,
            reserve_ids=reserve_ids,
            linked_ids=[entries[i].id for i in ranked if i in linked or i in reached],
            exchange_ids=[entries[i].id for i in tail],
            spare_ids=[entries[i].id for i in spare],
            flow_ids=flow_ids,
        )

    @staticmethod
    def _flow(
        ranked: Sequence[int],
        tail: Sequence[int],
        reserve_ids: Sequence[int],
        fused: np.ndarray,
        entries: Sequence[IndexEntry],
        messages: Sequence[BaseMessage],
        speakers: np.ndarray,
        filler: np.ndarray,
        positions: np.ndarray,
        excluded: Collection[int],
    ) -> list[int]:
        """What the best matches' speakers said next: the room a context leaves unused.

        People tell one thing over several lines while the other only reacts: "I
        bought a van!" / "No way! Show me!" / (a photo) / "She's... beautiful?" / "6
        million pesos, from a guy in Rancagua". A question about the price matches the
        first line; the price comes four lines later and shares no word with it. For
        each of the :data:`_FLOW_SEEDS` best-ranked messages, the same speaker's
        messages among the next :data:`_FLOW_REACH`, then among the previous
        :data:`_FLOW_BACK` (the line the other's short question follows: "I started
        rowing again." / "Which canal?" / the match), as long as the other speakers
        only react in between (at most :data:`_REACTION_WORDS` words: a long reply
        takes the floor, as an assistant's answer does), listed by rank of their match,
        then by distance; each of those lines brings the other's reactions before it,
        listed after it (a reaction may hold the answer: "How did the show go?" /
        "Second place!"). The lines between two of the :data:`_GAP_SEEDS` best-ranked
        messages at most :data:`_GAP_LINES` apart come last, whoever says them.
        Filler, what the selection already holds and what scores nothing at all for the
        question are left out. They are listed, not selected: hydration adds them last,
        only into room the rest of the context left unused.
        """
        held = {entries[i].id for i in chain(ranked, tail)} | set(reserve_ids)
        flow: list[int] = []

        def slot(position: int) -> int | None:
            # A binary search: a few dozen lookups a turn, no table of the whole history.
            k = int(np.searchsorted(positions, position, side="right")) - 1
            return k if k >= 0 and int(positions[k]) == position else None

        def free(near: int) -> bool:
            # Not filler, not held already, not excluded by the caller.
            return not (filler[near] or entries[near].id in held or entries[near].id in excluded)

        for i in ranked[:_FLOW_SEEDS]:
            position = entries[i].id
            # Forward, then backward: each way ends where the other took the floor.
            for steps in (range(1, _FLOW_REACH + 1), range(-1, -_FLOW_BACK - 1, -1)):
                between: list[int] = []
                for step in steps:
                    near = slot(position + step)
                    if near is None:
                        break
                    if not _same_voice(speakers, entries, messages, i, near):
                        if _word_count(message_text(messages[position + step])) > _REACTION_WORDS:
                            break  # the other took the floor
                        between.append(near)
                        continue
                    if fused[near] <= 0 or not free(near):
                        continue
                    for taken in (near, *between):
                        if free(taken):
                            held.add(entries[taken].id)
                            flow.append(entries[taken].id)
                    between = []
        # Two of the best matches a few lines apart tell one story: the lines between
        # them ("Second place!" between "How did the show go?" and "Mrs. Grant won
        # again") belong to it, whoever says them.
        seeds = sorted(entries[i].id for i in ranked[:_GAP_SEEDS])
        for first, second in pairwise(seeds):
            if not 1 < second - first <= _GAP_LINES:
                continue
            if _dateline_of(message_text(messages[first])) != _dateline_of(
                message_text(messages[second])
            ):
                continue  # two sittings: the end of one, the start of the next
            for position in range(first + 1, second):
                near = slot(position)
                if near is not None and free(near):
                    held.add(entries[near].id)
                    flow.append(entries[near].id)
        return flow

    @staticmethod
    def _answered(
        fused: np.ndarray,
        head: np.ndarray,
        scored: _Scored,
        entries: Sequence[IndexEntry],
        messages: Sequence[BaseMessage],
        excluded: set[int],
    ) -> np.ndarray | None:
        """Scores with the reply to each short question among the best matches raised.

        "Which team does Tim support?" matches Tim's own "Who's your favourite team?"
        asked of his friend, and the answer ("The Wolves, for sure") shares no word with
        it. A short question among the expansion pool hands :data:`_ANSWER_FACTOR` of
        its score to the message right after it (not filler), which then ranks on its
        own: a selected question brought its answer before (its exchange), one ranked
        below the selection did not. ``None`` when no score changed.
        """
        index = scored.lexical
        filler = index.filler()
        n = len(entries)
        raised: np.ndarray | None = None
        for slot in head[:_EXPANSION_POOL].tolist():
            reply = slot + 1
            at = entries[slot].id
            if reply >= n or entries[reply].id != at + 1 or at + 1 in excluded or filler[reply]:
                continue
            # The passages tell cheaply whether it may ask anything at all.
            if not index.doc_asks(slot):
                continue
            own = index.doc_passages(slot)
            if not own or len(own) >= _SHORT_MESSAGE_WORDS:
                continue
            text = message_text(messages[at])
            if len(text) > _SHORT_QUESTION_CHARS or not is_question(text):
                continue
            if _word_count(text) >= _SHORT_MESSAGE_WORDS:
                continue
            want = _ANSWER_FACTOR * float(fused[slot])
            current = fused if raised is None else raised
            if want > current[reply]:
                if raised is None:
                    raised = fused.copy()
                raised[reply] = want
        return raised

    @staticmethod
    def _restated(
        query: str,
        fused: np.ndarray,
        head: np.ndarray,
        scored: _Scored,
        entries: Sequence[IndexEntry],
        messages: Sequence[BaseMessage],
        excluded: set[int],
    ) -> tuple[np.ndarray | None, set[int]]:
        """Scores with the user's statements that the best-matching assistant replies
        react to raised to the replies' scores, and those replies lowered.

        In a chat with an assistant the user states the facts ("The Hobart is acting up
        now, the bowl won't lock") and the assistant reacts in its own, more general
        words ("That's a frustrating failure, but a common one on older Hobarts; a
        repair..."), which a question ("What equipment needed repairs this year?")
        shares more of. The reply then fills the context in place of the statement. An
        assistant reply among the best :data:`_RESTATED_SEEDS` matches, right after a
        user message that asks nothing, hands its score to that message and keeps
        :data:`_RESTATED_FACTOR` of its own, when it reacts to it: two words at least
        are shared (in the messages' openings, ``opening_terms``), and weigh (idf)
        :data:`_REACTION_RATIO` times or more what the reply shares on average with the
        user's other messages around that say something (:data:`_REACTION_OTHERS`; no
        reaction is read without them). A reply that does not react to the message
        before it (a note of its own: "Noted: Elif is now in size 11 shoes") keeps its
        score, as does one matched through a line it repeats with other matches
        (boilerplate: :func:`_repeating`) and one whose question the user answered right
        after it ("slate or mustard?" / "grey": the exchange is the evidence,
        :meth:`_long_exchange`). Not for a question about what the assistant said or
        recommended, nor in a transcript of named people (two people, no assistant).
        Also returns the statements raised (``None`` and none when no score changed).
        """
        index = scored.lexical
        asked = query[:_QUERY_CHARS]
        if (
            _TO_ASSISTANT.search(asked)
            or _RECOMMENDED.search(asked)
            or _transcript_people(index) is not None
        ):
            return None, set()
        roles = _assistant_messages(messages)
        if roles is None:
            return None, set()
        filler = index.filler()
        n = len(entries)
        count = max(index.passage_count, 1)
        weights: dict[str, float] = {}
        terms_of = index.opening_terms

        def shared(reply: int, slot: int) -> float:
            total = 0.0
            for term in terms_of(reply) & terms_of(slot):
                weight = weights.get(term)
                if weight is None:
                    weight = math.log(count / max(index.passage_frequency(term), 1))
                    weights[term] = weight
                total += weight
            return total

        seeds = head[:_RESTATED_SEEDS].tolist()
        recurring = {
            slot
            for held in _copies_of(seeds, scored).values()
            if len(held) >= _RECURRING_COPIES
            for slot in held
        }
        raised: np.ndarray | None = None
        promoted: set[int] = set()
        for slot in seeds:
            at, prompt = entries[slot].id, slot - 1
            if (
                prompt < 0
                or entries[prompt].id != at - 1
                or at - 1 in excluded
                or filler[prompt]
                or not roles[at]
                or messages[at - 1].type != "human"
                or ends_asking(message_text(messages[at - 1]))
                or slot in recurring
                or (at + 1 < len(messages) and LocalSelector._bare_answer(at + 1, messages))
            ):
                continue
            # The user's other messages that say something (a "thanks" or an empty
            # break between threads shares nothing with anything: it would make any
            # shared word look like a reaction).
            others = [
                other
                for step in _REACTION_OTHERS
                if 0 <= (other := slot + step) < n
                and entries[other].id == at + step
                and messages[at + step].type == "human"
                and not filler[other]
            ]
            if not others or len(terms_of(slot) & terms_of(prompt)) < 2:
                continue
            around = sum(shared(slot, other) for other in others) / len(others)
            if shared(slot, prompt) < _REACTION_RATIO * around:
                continue
            if raised is None:
                raised = fused.copy()
            raised[prompt] = max(float(raised[prompt]), float(fused[slot]))
            raised[slot] = _RESTATED_FACTOR * float(raised[slot])
            promoted.add(prompt)
        return raised, promoted

    @staticmethod
    def _exchange(pos: int, text: str, messages: Sequence[BaseMessage]) -> list[int]:
        """Positions of the messages that complete the short message at ``pos``.

        Consecutive short messages of one speaker form one unit (a burst: "ugh" /
        "hospital pushed it back to the 28th" / "they had a staffing thing"): the match
        brings the rest of its burst (:meth:`_burst`). Then the message before the burst
        (what it replies to) always, with the burst that one ends; after it, only an
        answer: the next message when this one asks a question, the one after a
        follow-up question it prompted ("I made coconut ice cream." / "What did you
        think?" / "Super good!"), and a short reply pointing back at the results or
        options it offers (:meth:`_choice`). A plain next statement moves on to
        something else and is left out.
        """
        earlier = LocalSelector._burst(pos, -1, messages)
        later = LocalSelector._burst(pos, 1, messages)
        first = earlier[-1] if earlier else pos
        last = later[-1] if later else pos
        near = [*earlier, *later, first - 1]
        if first > 0 and not _same_speaker(messages[first - 1], messages[first]):
            # The burst before it, another speaker's (a reply answers the whole burst).
            near.extend(LocalSelector._burst(first - 1, -1, messages))
        if LocalSelector._request_answered(last, text, messages):
            near.extend(LocalSelector._answer_chain(last, messages))
        elif is_question(text):
            near.append(last + 1)
        elif last + 1 < len(messages) and is_question(message_text(messages[last + 1])):
            near.append(last + 2)
        near.extend(LocalSelector._choice(pos, messages))
        return near

    @staticmethod
    def _answer_chain(pos: int, messages: Sequence[BaseMessage]) -> list[int]:
        """The assistant's reply to the request at ``pos``, and when the user follows it
        up at once with a short question or what it asked for ("ok, how do we make it
        deterministic?", "here: ```...```"), that follow-up and its reply: a problem is
        often solved a turn after it is stated."""
        near = [pos + 1]
        follow = pos + 2
        if follow + 1 < len(messages) and messages[follow + 1].type == "ai":
            text = message_text(messages[follow])
            if messages[follow].type == "human" and (
                (is_question(text) and _word_count(text) <= _FOLLOW_UP_WORDS) or _pastes(text)
            ):
                near.extend([follow, follow + 1])
        return near

    @staticmethod
    def _request_answered(pos: int, text: str, messages: Sequence[BaseMessage]) -> bool:
        """Whether the user message at ``pos`` asks the assistant for something (a
        request or pasted material) that the assistant's next message answers."""
        return (
            messages[pos].type == "human"
            and pos + 1 < len(messages)
            and messages[pos + 1].type == "ai"
            and not tool_calls_of(messages[pos + 1])
            and (_requests(text[:_SHORT_QUESTION_CHARS]) or _pastes(text))
        )

    @staticmethod
    def _long_exchange(
        pos: int, text: str, messages: Sequence[BaseMessage], *, answered: bool
    ) -> list[int]:
        """Positions of the messages that complete the long message at ``pos``, by structure.

        A message that asks something (anywhere: a long reply may ask "slate grey or
        mustard?" before its closing advice) brings a bare reply from the other speaker
        right after it ("grey"). With ``answered`` (one of the best few matches), an
        assistant reply also brings the user message it reacts to (with the rest of that
        message's burst): "One missed day won't break anything..." matches the
        question, and the user's "Missed today, sorry" before it is the evidence. Not
        when that message ends in a question: a reply to a question holds the answer
        itself ("what's been your toughest challenge?" / "Last season I hurt my
        ankle..."). Results or options it offers bring the short reply choosing among
        them (:meth:`_choice`).
        """
        near = []
        if (
            answered
            and pos > 0
            and messages[pos].type == "ai"
            and messages[pos - 1].type == "human"
            and not ends_asking(message_text(messages[pos - 1]))
        ):
            near.append(pos - 1)
            near.extend(LocalSelector._burst(pos - 1, -1, messages))
        if pos + 1 < len(messages) and LocalSelector._bare_answer(pos + 1, messages):
            near.append(pos + 1)
        elif answered and LocalSelector._request_answered(pos, text, messages):
            # A best match that asks the assistant for something, or pastes what it is
            # to read: its reply ("the fix is...") is the answer.
            near.extend(LocalSelector._answer_chain(pos, messages))
        near.extend(LocalSelector._choice(pos, messages))
        return near

    @staticmethod
    def _burst(pos: int, step: int, messages: Sequence[BaseMessage]) -> list[int]:
        """Positions of the burst around ``pos`` on one side (``step`` -1: before it,
        nearest first; 1: after it): the speaker's consecutive short messages.

        People texting send several lines in a row ("peanut died this morning" / "he
        was the best little hamster"); the fact is often a line or two away from the
        line (or the reply) that matches. Bounded: at most :data:`_BURST_LINES` lines
        of :data:`_BURST_WORDS` words in all; another speaker, a message with tool
        calls, a long message or a message opening with a date (a new sitting's first
        line, which belongs to the burst it opens) ends the burst.
        """
        if not 0 <= pos < len(messages):
            return []
        head = messages[pos]
        found: list[int] = []
        words = 0
        at = pos + step
        # Going back, a dated line is the first of its burst; going on, a new one.
        opened = step < 0 and opens_with_date(message_text(head))
        while 0 <= at < len(messages) and len(found) < _BURST_LINES and not opened:
            other = messages[at]
            if not _same_speaker(other, head):
                break
            text = message_text(other)
            words += _word_count(text)
            opened = opens_with_date(text)
            if words > _BURST_WORDS or (opened and step > 0):
                break
            found.append(at)
            at += step
        return found

    @staticmethod
    def _choice(pos: int, messages: Sequence[BaseMessage]) -> list[int]:
        """The user's short reply choosing among the results or options at ``pos``.

        "Let's go with the second one from that list." after a tool's hotel list, "Take
        the Wednesday one." after free slots: the decision points back at what was
        offered and shares no word with a question about it. Offered: by a turn that
        calls a tool (the user's request the assistant answers with a call, the call,
        its result, the assistant's reply closing it) or an assistant message listing
        items. The reply is the next user message, at most :data:`_CHOICE_GAP` messages
        (the rest of that turn) after it: a statement (a question asks for something
        new) of at most :data:`_CHOICE_WORDS` words that refers back
        (:data:`_POINTS_BACK`).
        """
        if not 0 <= pos < len(messages):
            return []
        offer = messages[pos]
        if offer.type == "human":
            offers = pos + 1 < len(messages) and bool(tool_calls_of(messages[pos + 1]))
        elif offer.type == "ai":
            offers = (
                bool(tool_calls_of(offer))
                or (pos > 0 and messages[pos - 1].type == "tool")
                or len(_LISTED_ITEM.findall(message_text(offer)[:_OFFER_CHARS])) >= 2
            )
        else:
            offers = offer.type == "tool"
        if not offers:
            return []
        for at in range(pos + 1, min(pos + 2 + _CHOICE_GAP, len(messages))):
            reply = messages[at]
            if reply.type in ("ai", "tool"):
                continue
            text = message_text(reply)
            if (
                reply.type == "human"
                and _word_count(text) <= _CHOICE_WORDS
                and not is_question(text)
                and _POINTS_BACK.search(text)
            ):
                return [at]
            return []
        return []

    @staticmethod
    def _bare_answer(pos: int, messages: Sequence[BaseMessage]) -> bool:
        """Whether the message at ``pos`` is a bare answer ("4", "yes", "grey") to the
        other speaker's question right before it: filler on its own, evidence there."""
        if pos <= 0 or pos >= len(messages):
            return False
        before, reply = messages[pos - 1], messages[pos]
        if reply.type not in _SPEAKER_TYPES or before.type not in _SPEAKER_TYPES:
            return False
        if reply.type == before.type:
            return False
        return answers_question(message_text(reply), message_text(before))

    @staticmethod
    def _distinct(
        order: list[int], entries: Sequence[IndexEntry], messages: Sequence[BaseMessage]
    ) -> list[int]:
        """``order`` with each text once (the best-ranked copy, the latest, stays).

        Only the head of the ranking is read (the expansion pool and a margin), so a
        long history costs no extra pass. Filler never gets here: it scores zero.
        """
        head, tail = order[: 2 * _EXPANSION_POOL], order[2 * _EXPANSION_POOL :]
        return _first_copies(head, entries, messages) + tail

    @staticmethod
    def _bridged(
        query: str,
        order: list[int],
        scored: _Scored,
        entries: Sequence[IndexEntry],
        messages: Sequence[BaseMessage],
        excluded: set[int],
    ) -> dict[int, float]:
        """Messages about a rare name that the best matches mention (a bridge entity).

        "Where has my physio moved to?" finds "Farah has just moved to Annecy"; the
        message that says who Farah is ("my physiotherapist, Farah") shares no word with
        the question, only the name with the first find. Names in the best passages
        of the top few matches, when rare in the conversation (a name on every line,
        such as a speaker's, links nothing), become a second query; its best matches
        rank a little below the top match. One that also matches the question on its own
        (the name and "moved": the answer) ranks above both of its clues alone.
        Identifiers (an order or flight number, a release number) bridge like names.
        """
        query_terms = set(content_terms(query))
        index, best, fused = scored.lexical, scored.best_passage, scored.fused
        rare = _rare_df(index)
        names: set[str] = set()
        asked = _asked_names(query, index) if scored.asked is None else scored.asked
        for slot in order[:_BRIDGE_SEEDS]:
            pid = int(best[slot])
            if pid < 0:
                continue
            text = index.passage_text(pid)
            clues = list(_bridge_clues(text))
            # "What does Theo do for work now?" and the match "helping my uncle Theo move
            # a wardrobe": "my uncle" is Theo too, and "My uncle just got a job as a
            # paramedic" says what he does without his name. Only a relation set right
            # beside the name ("my uncle Theo", "Ruairi - my sister-in-law") is his.
            if asked:
                clues += _aliases(asked, text)
            clues += _names_in_lower_case(text, pid, index, query_terms, rare)
            for name in clues:
                # The words themselves, not their stems: the query is stemmed again.
                # A month or weekday is capitalized but names no one: "28 March" does
                # not link to every other message that mentions March.
                names.update(
                    word
                    for word in tokenize(name)
                    if word not in MONTHS and word not in DAYS  # tokens are lower case
                    for term in content_terms(word)
                    if term not in query_terms
                    and len(term) > 2
                    and index.passage_frequency(term) <= rare
                )
        if not names:
            return {}
        raw, _ = index.score_passages(" ".join(sorted(names)), told_apart=False)
        top = float(raw.max()) if raw.size else 0.0
        if top <= 0:
            return {}
        seed = float(fused[order[0]])
        seeds = set(order[:_BRIDGE_SEEDS])  # a seed matches its own names
        found: dict[int, float] = {}
        hits = np.flatnonzero(raw > 0)
        for slot in _best_first(raw, hits, 2 * _BRIDGE_SEEDS)[: 2 * _BRIDGE_SEEDS]:
            if entries[slot].id not in excluded:
                bridge = _BRIDGE_FACTOR * seed * float(raw[slot]) / top
                own = float(fused[slot])
                if own >= RELATIVE_CUTOFF * seed and slot not in seeds:
                    # It matches the question on its own too: both clues meet here.
                    bridge = max(own, bridge) + _BRIDGE_BOTH * min(own, bridge)
                found[int(slot)] = bridge
        return found

    @staticmethod
    def _constraints(
        query: str,
        order: list[int],
        scored: _Scored,
        entries: Sequence[IndexEntry],
        messages: Sequence[BaseMessage],
        excluded: set[int],
    ) -> Iterator[tuple[int, float]]:
        """For a question asking whether something is all right for the user, what the
        user said they cannot have (an allergy, an intolerance, a diet, a condition).

        "Noor wants to bring baklava to school, anything I should think about?" is
        answered by "I need to flag Noor's tree nut allergy", which shares no word with
        it: the selector does not know what baklava holds, but a question asking for a
        go-ahead ("Can I...", "Should I...", "any reason not to?", "would that work?")
        is about the user's limits. The user's messages stating one
        (:data:`_CONSTRAINT_TERMS`, the latest postings; a sentence asking about it does
        not count) come in at the neighbour factor of the best match, at most
        :data:`_CONSTRAINTS_KEPT`, best scored first, then latest.
        """
        if not order or not _asks_go_ahead(query[:_QUERY_CHARS]):
            return
        index, fused = scored.lexical, scored.fused
        docs: set[int] = set()
        for term in _CONSTRAINT_TERMS:
            # The latest mentions: a limit learnt last is the one that holds.
            for pid in index.passages_with(term, _CONSTRAINT_PASSAGES, newest=True):
                # A sentence asking about it states nothing ("does Priya have any
                # allergies?"); one stating it may sit beside a question.
                if any(
                    term in content_terms(sentence) and not is_question(sentence)
                    for sentence in split_sentences(index.passage_text(pid))
                ):
                    docs.add(index.doc_of(pid))
        slots = [
            d
            for d in docs
            if d < len(entries)
            and entries[d].id not in excluded
            and messages[entries[d].id].type == "human"
        ]
        if not slots:
            return
        top = float(fused[order[0]])
        slots.sort(key=lambda d: (-float(fused[d]), -entries[d].id))
        for d in slots[:_CONSTRAINTS_KEPT]:
            yield d, _NEIGHBOUR_FACTOR * top

    @staticmethod
    def _hopped(
        query: str,
        order: list[int],
        scored: _Scored,
        entries: Sequence[IndexEntry],
        excluded: set[int],
    ) -> dict[int, float]:
        """The message stating what the best match refers to (a second hop).

        "When are the leaving drinks?" finds "the leaving drinks coincide with the
        quarterly review"; the date is in "the quarterly review is on May 10th", which
        shares no word with the question. The best match's best passage, less the query's
        words and words common in the conversation, is a second query; its best match
        counts when its best passage shares two of those words (a phrase, not a chance
        word) and ranks at half the best match's score; three words (a phrase such as "the
        green biscuit tin") rank it as a name's bridge does.
        """
        if not order:
            return {}
        index, best, fused = scored.lexical, scored.best_passage, scored.fused
        pid = int(best[order[0]])
        if pid < 0:
            return {}
        query_terms = set(content_terms(query))
        common = min(_HOP_MAX_DF, max(_BRIDGE_MIN_DF, int(_HOP_DF_SHARE * index.passage_count)))
        hop = {
            term
            for term in index.passage_terms[pid] - query_terms
            if len(term) > 2 and not term.isdigit() and index.passage_frequency(term) <= common
        }
        if len(hop) < 2:
            return {}
        words = [w for w in tokenize(index.passage_text(pid)) if hop.intersection(content_terms(w))]
        raw, found_best = index.score_passages(" ".join(words), told_apart=False)
        hits = np.flatnonzero(raw > 0)
        if not hits.size:
            return {}
        top = float(raw.max())
        for slot in _best_first(raw, hits, 2 * _BRIDGE_SEEDS)[: 2 * _BRIDGE_SEEDS].tolist():
            if slot == order[0] or entries[slot].id in excluded:
                continue
            shared = len(index.passage_terms[int(found_best[slot])] & hop)
            if shared >= 2:
                # Three words of the match's sentence ("the green biscuit tin") name
                # what it refers to: a clue as strong as a name's (a bridge).
                factor = _BRIDGE_FACTOR if shared >= _HOP_PHRASE else _HOP_FACTOR
                return {slot: factor * float(fused[order[0]]) * float(raw[slot]) / top}
        return {}

    @staticmethod
    def _anchored(
        query: str,
        order: list[int],
        primary: Collection[int],
        scored: _Scored,
        entries: Sequence[IndexEntry],
        excluded: set[int],
    ) -> dict[int, float]:
        """The message dating the event a best match's date is relative to.

        "The probation review happens 60 days after the start date" answers "what date
        is my probation review?" only with "I start at the new company on 23 March",
        which shares one word ("start") with it and none with the question: too little
        for a second hop (:meth:`_hopped`), but the relation says what to look for (the
        event after "after") and what it must hold (a date). The best passage naming
        the event and holding a calendar date ranks just below the match it completes.
        """
        index, best, fused = scored.lexical, scored.best_passage, scored.fused
        query_terms = set(content_terms(query))
        found: dict[int, float] = {}
        for seed in [s for s in order[:_ANCHOR_SEEDS] if s in primary]:
            pid = int(best[seed])
            if pid < 0:
                continue
            for anchor in _relative_anchors(index.passage_text(pid)):
                words = [
                    w
                    for w in tokenize(anchor)
                    if (terms := content_terms(w))
                    and terms[0] not in query_terms
                    and terms[0] not in _TIME_WORDS
                    and not w.isdigit()
                ][:_ANCHOR_WORDS]
                if not words:
                    continue
                raw, found_best = index.score_passages(" ".join(words), told_apart=False)
                hits = np.flatnonzero(raw > 0)
                if not hits.size:
                    continue
                top = float(raw.max())
                for slot in _best_first(raw, hits, 2 * _BRIDGE_SEEDS)[: 2 * _BRIDGE_SEEDS]:
                    slot = int(slot)
                    if slot == seed or entries[slot].id in excluded:
                        continue
                    if _states_date(index.passage_text(int(found_best[slot]))):
                        score = _LINK_FACTOR * float(fused[seed]) * float(raw[slot]) / top
                        found[slot] = max(found.get(slot, 0.0), score)
                        break
        return found

    @staticmethod
    def _dated(
        query: str,
        order: list[int],
        primary: Collection[int],
        scored: _Scored,
        entries: Sequence[IndexEntry],
        messages: Sequence[BaseMessage],
        excluded: set[int],
    ) -> Iterator[tuple[int, float]]:
        """For a "when" question, the dateline above a best match that holds no date.

        A chat often dates a sitting once, at its start ("[Session 3, 2 February 2025]
        evening", "Monday 3 March: back again"), and says "Passed my driving test
        today!" later: the match answers "when did I pass my driving test?" only with
        the message that dated the day. The nearest earlier message opening with a
        date (within :data:`_DATELINE_LOOKBACK` messages) ranks just below the match.
        Only in a history with that habit (two datelines at least), and never across
        an empty message (scoped recall's break between threads): a date further into a
        message ("Noted, 14 March.") dates something else, not the sitting.
        """
        if not WHEN_QUESTION.search(query):
            return
        datelines = scored.lexical.datelines()
        if int(datelines.sum()) < _DATELINE_HABIT:
            return
        fused = scored.fused
        said = bool(WHEN_SAID.search(query))  # the day it was said, whatever it names
        for seed in [s for s in order[:_ANCHOR_SEEDS] if s in primary]:
            if datelines[seed] or (
                not said
                and _states_date(message_text(messages[entries[seed].id])[:_DATED_TEXT_CHARS])
            ):
                continue  # it dates itself
            for slot in range(seed - 1, max(seed - 1 - _DATELINE_LOOKBACK, -1), -1):
                if datelines[slot]:
                    if entries[slot].id not in excluded:
                        yield slot, _LINK_FACTOR * float(fused[seed])
                    break
                if not message_text(messages[entries[slot].id]).strip():
                    break  # another conversation's records lie beyond

    @staticmethod
    def _told_when(
        query: str,
        order: list[int],
        primary: Collection[int],
        scored: _Scored,
        entries: Sequence[IndexEntry],
        messages: Sequence[BaseMessage],
        excluded: set[int],
    ) -> Iterator[tuple[int, float]]:
        """For a "when" question, the line where a best match's speaker said when.

        People give the day once and go on about the event: "Theo asked me out last
        Thursday and we went kayaking on Sunday" / "Did he capsize you?" / "Nobody
        capsized. He's a great paddler"; "A food blogger wrote about me on Tuesday." /
        "Who?" / "Leeds Eats Out, she has forty thousand followers". The question
        ("when did Leeds Eats Out post about Seun?") matches the later line, which
        says no day. For each of the :data:`_TOLD_SEEDS` best matches saying no day of
        its own (:func:`_tells_time`), the nearest earlier message of the same speaker
        that does, within :data:`_TOLD_LOOKBACK` messages, ranks just below the match.
        The walk passes over the other speaker's reactions only, and stays in the
        match's sitting: it stops at a dateline naming another day, after the header
        opening the sitting, above a match that opens its sitting with its date, and at
        an empty message (scoped recall's break between threads).
        """
        if not WHEN_QUESTION.search(query):
            return
        fused = scored.fused
        speakers, _ = scored.lexical.speakers()
        for seed in [s for s in order[:_TOLD_SEEDS] if s in primary]:
            said = message_text(messages[entries[seed].id])[:_DATED_TEXT_CHARS]
            if _tells_time(without_dateline(said)):
                continue  # it says when itself
            sitting = _dateline_of(said)
            # The other's line is a reaction while it is at most :data:`_REACTION_WORDS`
            # long, or, between two named people of a transcript (whose every line may
            # run to 40 words), no longer than the match: a longer one took the floor
            # (an assistant's answer to another request).
            named = int(speakers[seed]) >= 0
            reaction = max(_REACTION_WORDS, _word_count(said)) if named else _REACTION_WORDS
            for slot in range(seed - 1, max(seed - 1 - _TOLD_LOOKBACK, -1), -1):
                text = message_text(messages[entries[slot].id])[:_DATED_TEXT_CHARS]
                if not text.strip():
                    break  # another conversation's records lie beyond
                day = _dateline_of(text)
                if sitting is not None and day != sitting:
                    # An earlier sitting; or, above a match opening with its sitting's
                    # date, lines with none: the sitting before.
                    break
                if not _same_voice(speakers, entries, messages, seed, slot):
                    if _word_count(text) > reaction:
                        break  # the other took the floor: what came before is another exchange
                elif _tells_time(without_dateline(text)):
                    if entries[slot].id not in excluded:
                        yield slot, _LINK_FACTOR * float(fused[seed])
                    break
                if sitting is None and day is not None:
                    break  # the header opening the match's sitting

    @staticmethod
    def _coinciding(
        query: str,
        order: list[int],
        primary: Collection[int],
        scored: _Scored,
        entries: Sequence[IndexEntry],
        excluded: set[int],
    ) -> Iterator[tuple[int, float]]:
        """For a question relating two events in time, the message dating the other one.

        "Will Consuelo be in town to see Ivy's recital?" is answered by "the recital is
        Saturday June 14" and "she flies in on Friday June 20", "What exam do I have the
        morning after the recital?" by "my final is Thursday May 8": two messages whose
        only link is the calendar. For a question of that kind (:data:`_TWO_EVENTS`),
        the days a best match names where it says what the question asks about (its
        passages holding a question word; else its best passage) are compared with the
        days the latest passages naming the same months name
        (:func:`~langgraph_librarian.select._calendar.day_spans`). Of the messages
        naming a day within :data:`_COINCIDE_WINDOW` days, not a best match already, the
        best scored (for "the day after" / "the week before": the nearest day first)
        ranks just below the match, one per match.
        """
        cue = _TWO_EVENTS.search(query[:_QUERY_CHARS]) if order else None
        if cue is None:
            return
        nearest_first = cue.group("next") is not None
        index, fused, best = scored.lexical, scored.fused, scored.best_passage
        query_terms = set(content_terms(query))
        brought: set[int] = set()
        for seed in [s for s in order[:_ANCHOR_SEEDS] if s in primary]:
            own = [p for p in index.doc_passages(seed) if index.passage_terms[p] & query_terms]
            if not own and int(best[seed]) >= 0:
                own = [int(best[seed])]
            spans = tuple(
                span for p in own for span in day_spans(without_dateline(index.passage_text(p)))
            )
            if not spans:
                continue
            days = range(
                min(s.first for s in spans) - _COINCIDE_WINDOW,
                max(s.last for s in spans) + _COINCIDE_WINDOW + 1,
            )
            months = {month_of(day) for day in days}
            near: dict[int, int] = {}  # slot -> days to the match's days
            terms = dict.fromkeys(
                t for m in sorted(months) for n in month_names(m) for t in content_terms(n)[:1]
            )
            for term in terms:
                dated = 0
                for pid in index.passages_with(term, _COINCIDE_READ, newest=True):
                    theirs = day_spans(without_dateline(index.passage_text(pid)))
                    if not theirs:
                        continue
                    dated += 1
                    doc = index.doc_of(pid)
                    if doc not in primary and doc not in brought and doc < len(entries):
                        apart = days_apart(spans, theirs)
                        if apart <= _COINCIDE_WINDOW:
                            near[doc] = min(near.get(doc, apart), apart)
                    if dated >= _COINCIDE_DATED:
                        break
            candidates = [d for d in near if entries[d].id not in excluded]
            if not candidates:
                continue
            if nearest_first:
                pick = min(candidates, key=lambda d: (near[d], -float(fused[d]), -entries[d].id))
            else:
                pick = min(candidates, key=lambda d: (-float(fused[d]), near[d], -entries[d].id))
            brought.add(pick)
            yield pick, _LINK_FACTOR * float(fused[seed])

    @staticmethod
    def _next_entry(
        seed: int, entries: Sequence[IndexEntry], excluded: set[int], filler: np.ndarray
    ) -> int | None:
        """The slot of the message right after ``seed``'s when it is indexed, may be
        selected and is no filler: the reply a completion may bring."""
        reply = seed + 1
        if reply >= len(entries):
            return None
        at = entries[reply].id
        if at != entries[seed].id + 1 or at in excluded or filler[reply]:
            return None
        return reply

    @staticmethod
    def _voiced(
        order: list[int],
        primary: Collection[int],
        scored: _Scored,
        entries: Sequence[IndexEntry],
        excluded: set[int],
    ) -> Iterator[tuple[int, float]]:
        """For a question about what one speaker of a transcript said, thinks or does,
        that speaker's reply to a best match of another speaker.

        "What does Melanie think about Caroline's decision to adopt?" matches
        Caroline's "I'm thrilled to make a family for kids who need one"; Melanie's
        answer is her reply right after it ("You're doing something amazing!...",
        sharing no word with the question). "How often does John work out with his
        family?" matches Maria's "How often do you all work out together?"; John's
        "Three times a week" follows it. The reply ranks just below the match.
        """
        named = scored.named
        if named < 0:
            return
        speakers, _ = scored.lexical.speakers()
        fused, filler = scored.fused, scored.lexical.filler()
        # A weak match's reply is no answer either: selected matches only.
        for seed in [s for s in order[:_VOICE_SEEDS] if s in primary]:
            if int(speakers[seed]) in (-1, named):
                continue
            reply = LocalSelector._next_entry(seed, entries, excluded, filler)
            if reply is not None and int(speakers[reply]) == named:
                yield reply, _LINK_FACTOR * float(fused[seed])

    @staticmethod
    def _replied(
        query: str,
        order: list[int],
        primary: Collection[int],
        scored: _Scored,
        entries: Sequence[IndexEntry],
        messages: Sequence[BaseMessage],
        excluded: set[int],
    ) -> Iterator[tuple[int, float]]:
        """For a question about what the assistant said, its reply to a best match.

        "What present idea did you give me for my father?" matches the user's "Dad's
        turning 70 and I'm stuck for ideas", a request with no question mark, and the
        answer is the assistant's reply after it ("How about a vinyl reissue..."), which
        shares no word with the question. The reply ranks just below the request.
        """
        if not _TO_ASSISTANT.search(query):
            return
        fused, filler = scored.fused, scored.lexical.filler()
        for seed in [s for s in order[:_BRIDGE_SEEDS] if s in primary]:
            if messages[entries[seed].id].type != "human":
                continue
            reply = LocalSelector._next_entry(seed, entries, excluded, filler)
            if reply is not None and messages[entries[reply].id].type == "ai":
                yield reply, _LINK_FACTOR * float(fused[seed])

    @staticmethod
    def _changed(
        query: str,
        order: list[int],
        primary: Collection[int],
        scored: _Scored,
        entries: Sequence[IndexEntry],
        messages: Sequence[BaseMessage],
        excluded: set[int],
    ) -> Iterator[tuple[int, float]]:
        """For a question about what holds now or how something changed, later changes
        stated by a best match's author.

        "Which city do I live in now?" matches "We live in Lyon" best; the answer is a
        later "Big news: we moved to Aarhus", which shares no word with either, so
        neither the question's words nor the statement's link it (:meth:`_linked` needs
        one of them). For a question asking what holds now ("now", "currently", "still",
        "these days") or how something changed ("How did my return date change?"), the
        best-ranked later messages of the same author among the
        expansion pool that state a change of state (:data:`_STATE_CHANGES`: a move, a
        new job, a switch, a date moved) come in at the neighbour factor of the best
        match: below it, so a tight
        budget drops them first.
        """
        if not (_asks_now(query) or _asks_change(query)):
            return
        speakers, _ = scored.lexical.speakers()
        fused = scored.fused
        pool = order[:_EXPANSION_POOL]
        query_terms = set(content_terms(query))
        for seed in [s for s in order[:_CHANGE_SEEDS] if s in primary]:
            at = entries[seed].id
            topic = query_terms | set(content_terms(message_text(messages[at])))
            found = 0
            for slot in pool:
                pos = entries[slot].id
                if pos <= at or pos in excluded or slot in primary:
                    continue
                if messages[pos].type != messages[at].type or speakers[slot] != speakers[seed]:
                    continue
                text = message_text(messages[pos])[:_DATED_TEXT_CHARS]
                if not _states_change(text, topic, set(content_terms(text))):
                    continue
                yield slot, _NEIGHBOUR_FACTOR * float(fused[seed])
                found += 1
                if found == _CHANGES_PER_SEED:
                    break

    @staticmethod
    def _replaced(
        query: str,
        order: list[int],
        primary: Collection[int],
        scored: _Scored,
        entries: Sequence[IndexEntry],
        messages: Sequence[BaseMessage],
        excluded: set[int],
    ) -> Iterator[tuple[int, float]]:
        """Later messages of a best match's author that name the value it stated and
        retire it.

        "front door going sage green" matches "what colour's the front door gonna be
        now?"; the answer is "scrap the sage. entrance getting hague blue", which shares
        no word with the question, and no query word with the statement, so neither
        :meth:`_linked` nor the ranking reaches it. People retire a value by naming it
        ("ditched FreeAgent, moved everything over to Xero", "kev sold the transit",
        "we've had the Volvo pulled out"): a later sentence of the same author holding a
        rare word of the best match's best sentence (not a word of the question) and a
        word that retires something (:data:`_RETIRES`) comes in just after the matches
        ranked by their own score (:data:`_RETIRED_FACTOR`), at most
        :data:`_CHANGES_PER_SEED` per match, the rarest word's first. Whatever the
        question's tense: a value that was retired matters to it. Only the user's
        statements (a human message): the assistant's advice says "instead" and
        "replace" all the time. Bounded: the :data:`_RETIRED_TERMS` rarest words, each
        later sentence read once, its first :data:`_RETIRED_CHARS` characters.
        """
        index, best, fused = scored.lexical, scored.best_passage, scored.fused
        speakers = _transcript_speakers(index)
        query_terms = set(content_terms(query))
        rare = _rare_df(index)
        retires: dict[int, bool] = {}

        def retiring(passage: int) -> bool:
            known = retires.get(passage)
            if known is None:
                text = index.passage_text(passage)[:_RETIRED_CHARS]
                known = retires[passage] = _RETIRES.search(text) is not None
            return known

        for seed in [s for s in order[:_BRIDGE_SEEDS] if s in primary]:
            pid = int(best[seed])
            at = entries[seed].id
            if pid < 0 or messages[at].type != "human":
                continue
            values = sorted(
                (index.passage_frequency(term), term)
                for word in set(tokenize(index.passage_text(pid)))
                if word.isalpha() and word not in MONTHS and word not in DAYS
                for term in content_terms(word)
                if term not in query_terms and len(term) > 2
            )
            found: list[int] = []
            for df, term in values[:_RETIRED_TERMS]:
                if df > rare or len(found) == _CHANGES_PER_SEED:
                    break
                for passage in index.passages_with(term):
                    slot = index.doc_of(passage)
                    pos = entries[slot].id
                    if (
                        pos <= at
                        or pos in excluded
                        or slot in primary
                        or slot in found
                        or messages[pos].type != "human"
                        or speakers[slot] != speakers[seed]
                        or not retiring(passage)
                    ):
                        continue
                    found.append(slot)
                    yield slot, _RETIRED_FACTOR * float(fused[seed])
                    if len(found) == _CHANGES_PER_SEED:
                        break

    @staticmethod
    def _linked(
        query: str,
        seeds: dict[int, float],
        pool: list[int],
        scored: _Scored,
        entries: Sequence[IndexEntry],
        messages: Sequence[BaseMessage],
        excluded: Collection[int] = (),
    ) -> dict[int, float]:
        """Statements and changes about the same thing as a selected passage.

        A later message with a passage that changes what a selected passage stated
        (enough of the same query terms, and a change cue) is the current truth: it
        ranks just above the statement it changes, even when it scored lower on its
        own, so a tight budget keeps the latest value rather than the superseded one.
        Changes of changes follow (the latest of a chain ranks first). The earlier
        statements a selected change refers to rank just below it: at most
        :data:`_EARLIER_PER_CHANGE` by the change's author, those naming the most of the
        change's own words first (every earlier message sharing the change's query
        words, "price" and "cost" in a bakery chat, pushed the next-best match out).
        ``seeds`` maps the selected slots to their priorities.
        """
        query_terms = set(content_terms(query))
        index, best, fused = scored.lexical, scored.best_passage, scored.fused
        last = max((entries[slot].id for slot in pool), default=1) or 1
        priority = dict(seeds)
        linked: dict[int, float] = {}

        def matched(slot: int) -> tuple[frozenset[str], bool]:
            pid = int(best[slot])
            if pid < 0:
                return frozenset(), False
            return index.passage_terms[pid] & query_terms, index.passage_has_change[pid]

        # A seed's terms are query terms, so each pool message's passages are read once,
        # as their query terms (and whether they state a change), and only for the
        # messages a seed can link to (most seeds look at the changing messages only);
        # the answer for a slot and a set of seed terms is the same for every seed that
        # matched those terms.
        @cache
        def passages(slot: int) -> list[tuple[frozenset[str], bool]]:
            return [
                (index.passage_terms[pid] & query_terms, index.passage_has_change[pid])
                for pid in index.doc_passages(slot)
            ]

        # Exact pre-check, per pool message: all its passages' query terms (no passage
        # shares more than these).
        @cache
        def reach(slot: int) -> frozenset[str]:
            return frozenset().union(*(t for t, _ in passages(slot)))

        has_change, doc_has_change = index.passage_has_change, index.doc_has_change
        changing = [slot for slot in pool if doc_has_change[slot]]
        answers: dict[tuple[int, frozenset[str], int], tuple[bool, bool]] = {}

        def relation(slot: int, terms: frozenset[str], need: int) -> tuple[bool, bool]:
            """(some passage shares enough terms, one of those states a change)."""
            key = (slot, terms, need)
            found = answers.get(key)
            if found is None:
                shares = changes = False
                for passage_terms, change in passages(slot):
                    if len(passage_terms & terms) >= need:
                        shares = True
                        changes = changes or change
                found = answers[key] = (shares, changes)
            return found

        speakers = _transcript_speakers(index)

        def author(slot: int) -> tuple[int, str]:
            """Who wrote a message: its speaker in a transcript, and its role."""
            return int(speakers[slot]), messages[entries[slot].id].type

        def value_terms(seed: int) -> frozenset[str]:
            """The words of the seed's matching passage beyond the question's."""
            pid = int(best[seed])
            return index.passage_terms[pid] - query_terms if pid >= 0 else frozenset()

        def all_terms(slot: int) -> frozenset[str]:
            return frozenset().union(*(index.passage_terms[p] for p in index.doc_passages(slot)))

        def raises(seed: int, slot: int) -> bool:
            """Whether linking ``slot`` as the statement ``seed`` changes ranks it higher."""
            score = _LINK_FACTOR * priority[seed] + _RECENCY_BONUS * float(fused[slot])
            return score > max(priority.get(slot, 0.0), float(fused[slot]))

        def link(seed: int, slot: int, *, later: bool, promoted: list[int]) -> None:
            """Rank ``slot`` as a change of ``seed`` (``later``) or as the statement it
            changes, when that beats the slot's own score; a change is promoted (its own
            changes are looked for next round)."""
            if later:
                # Of several changes, the latest ranks first.
                recency = _RECENCY_BONUS * entries[slot].id / last
                score = _SUPERSEDE_FACTOR * priority[seed] + recency
            else:
                # Several earlier messages a change may refer to tie here: the more
                # relevant one on its own (a statement of the value, not a mention of
                # the topic) goes first.
                score = _LINK_FACTOR * priority[seed] + _RECENCY_BONUS * float(fused[slot])
            if score > max(priority.get(slot, 0.0), float(fused[slot])):
                priority[slot] = linked[slot] = score
                if later:
                    promoted.append(slot)

        def changes_naming(seed: int) -> list[int]:
            """Later messages with a passage stating a change and naming a rare word of
            the seed's matching passage."""
            pid = int(best[seed])
            if pid < 0:  # matched by meaning alone: a short message is its one passage
                own = index.doc_passages(seed)
                if len(own) != 1:
                    return []
                pid = own[0]
            found: set[int] = set()
            for term in rare_terms(index.passage_terms[pid]):
                # A word the conversation keeps using links nothing by itself (counted
                # first: its postings are not read).
                if index.passage_frequency(term) > _MAX_NAMED_PASSAGES:
                    continue
                holding = index.passages_with(term)
                found.update(index.doc_of(p) for p in holding if p > pid and has_change[p])
            return sorted(
                s
                for s in found
                if s != seed and entries[s].id > entries[seed].id and entries[s].id not in excluded
            )

        # First the selected seeds; then, for chains, only the changes just promoted
        # (a change of a change), looking forward only.
        frontier = sorted(priority, key=lambda s: -priority[s])
        for round_ in range(_LINK_ROUNDS):
            promoted: list[int] = []
            for seed in frontier:
                terms, seed_changes = matched(seed)
                if len(terms) < 2 and len(query_terms) >= 2:
                    # Matched by one question word ("diabetes"), or by meaning: a later
                    # change that names a rare word of the passage ("switched me from
                    # metformin to...") is still about the same thing.
                    for slot in changes_naming(seed):
                        link(seed, slot, later=True, promoted=promoted)
                    continue
                need = max(1, (2 * len(terms) + 2) // 3)
                # Only a change seed (first round) looks back; otherwise only later
                # messages that state a change can be linked.
                earlier: list[int] = []
                for slot in pool if round_ == 0 and seed_changes else changing:
                    if slot == seed:
                        continue
                    later = entries[slot].id > entries[seed].id
                    if not later and (round_ > 0 or not seed_changes):
                        continue
                    if len(reach(slot) & terms) < need:
                        continue
                    shares, changes = relation(slot, terms, need)
                    if not shares or (later and not changes):
                        continue
                    if later:
                        link(seed, slot, later=True, promoted=promoted)
                    else:
                        earlier.append(slot)
                # A change refers to one earlier statement, or two, of its own author:
                # those naming the most of the change's own words (the old value:
                # "instead of a rooftop hall" / "will be a rooftop hall"), then the
                # best-scoring, among those a link raises (one ranked above the link
                # is there already).
                earlier = [slot for slot in earlier if author(slot) == author(seed)]
                if earlier:
                    own = value_terms(seed)
                    earlier.sort(key=lambda slot: (-len(own & all_terms(slot)), -fused[slot]))
                raised = [slot for slot in earlier if raises(seed, slot)]
                for slot in raised[:_EARLIER_PER_CHANGE]:
                    link(seed, slot, later=False, promoted=promoted)
            if not promoted:
                break
            frontier = promoted
        return _one_per_text(linked, seeds, scored)
