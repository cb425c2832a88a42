"""Passage-level BM25 over message text with an incremental, process-wide cache.

A message is split into passages of a couple of sentences and scored by its best
passage (the "MaxP" approach for long documents): in a 700-word message the one
sentence that states a fact decides, not the chatter around it. Passages that state a
value (a number, a date, a name) or a change ("instead", "moved to") are flagged so the
selector can prefer and link them.

Each turn usually appends a few messages to the same history, so an index only grows:
the selector keeps one per history (with the history's view) and adds the new
messages' passages. Everything about the first ``d`` documents stays as it was when
more are added, so :meth:`BM25Index.head` reads an index at any earlier length as an
index of its own (a caller holding fewer candidates, another thread appending). A
history of 10,000 messages then costs a dictionary lookup per query term instead of
re-tokenizing everything.
"""

from __future__ import annotations

import bisect
import hashlib
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from langgraph_librarian._engine.postings import Postings, robertson_idf
from langgraph_librarian._engine.text import (
    DAYS,
    MONTHS,
    VALUE_PATTERN,
    content_terms,
    has_change_cue,
    split_sentences,
    stem_terms,
    tokenize,
)
from langgraph_librarian._engine.vectors import appended, unit_vectors
from langgraph_librarian.select._evidence import asks_question, is_filler, is_question

__all__: list[str] = []

_K1 = 1.2
_B = 0.75
_EXCHANGE_WORDS = 60
"""A message of fewer words (its indexed text) that asks something is a short question:
its question passage is read with the opening of the reply after it."""
VALUE_BOOST = 1.3
"""Score factor for a matching passage that holds a value absent from the query."""


_DATE_QUESTION = re.compile(
    r"\b(?:when|what\s+(?:date|day|time)|which\s+(?:date|day)|how\s+long\s+"
    r"(?:until|before|after|ago|since)|earlier|later\s+in\s+the)\b",
    re.IGNORECASE,
)
_OTHER_QUESTION = re.compile(
    r"\b(?:who|whom|whose|where|why|how\s+(?:much|many|far|big|old|long\s+is)|"
    r"what\s+(?!date\b|day\b|time\b|hour\b)\w+)\b",
    re.IGNORECASE,
)
"""A question asking something else too ("who leads X, and when is Y?"): every value
keeps its boost."""
_LATEST_QUESTION = re.compile(
    r"\b(?:latest|most\s+recent(?:ly)?|newest|last\s+(?:time|one|run|entry|reading|update))\b",
    re.IGNORECASE,
)
"""A question about the latest instance ("How many tests passed in the latest run?",
"What did the last reading say?"): the newest copy of a recurring template is that
instance, not chatter. "Now", "currently", "these days" are left to the change-of-state
rule of the local selector: they ask what holds, and a review found the newest copy of
templated boilerplate ("your plan for week 6 is on track") jumping ahead of a change."""
_DATE_VALUES = frozenset(MONTHS) | {d for d in DAYS if len(d) > 3}
"""Value tokens that date a passage (month and weekday names)."""
MAY_MONTH = re.compile(r"\bMay\b")
"""The month is written with a capital; "may", the verb, mostly is not."""
_CLOCK = re.compile(
    r"\b\d{1,2}[:.]\d{2}\b|\b\d{1,2}\s?(?:am|pm|a\.m\.|p\.m\.)(?!\w)", re.IGNORECASE
)
"""A time of day ("10:15", "5 pm"): it answers "when" and "what time" too."""
# A transcript line's speaker: "Caroline: ...", "(9 June 2023) Caroline: ..." or
# "[10:02] Ana Lima: ...". Only read as a speaker when most messages carry one (see
# local._about_speaker), so a pasted "Error: ..." or "Note: ..." names no one. Two
# letters at least: a "Q: ... A: ..." transcript's "A" is no name a question says.
_SPEAKER = re.compile(
    r"\s*(?:[(\[][^)\]\n]{1,40}[)\]]\s*)?([A-Z][\w'.-]{1,30})(?: [A-Z][\w'.-]{0,30})?:\s"
)
_MONTH_NAME = "(?:{})\\.?".format("|".join(sorted(MONTHS, key=len, reverse=True)))
"""A month's name or abbreviation (:data:`MONTHS`, longest first), as a pattern."""
_WEEKDAY = "(?:{})\\.?".format("|".join(sorted(DAYS, key=len, reverse=True)))
"""A weekday's name or abbreviation (:data:`DAYS`, longest first), as a pattern: before
a date ("[Tue 10 Sep 2024]") an abbreviation is no word."""
# A message that opens with a date: "[Session 3, 2 February 2025] evening", "(9 June
# 2023) Caroline: ...", "=== Session of 26 January 2025 ===", "Date: 2 March",
# "Monday 3 March: back again", "## 2025-03-02 standup". Before the date only marks
# and a header's label; a date further in ("Noted, 14 March.") or a fraction ("rated it
# 9/10") opens nothing.
_HEADER = (
    r"[\W_]{0,8}?\s*(?:(?:session|sitting|entry|date|day|log|chat|conversation)"
    r"\b(?:\s+(?:of|on|from|for|\d+))?\s*[,:;.-]?\s*)?"
)
_DATELINE = re.compile(
    _HEADER + rf"(?:(?:{_WEEKDAY}),?\s*)?(?:the\s+)?"
    rf"(?:\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH_NAME}(?![a-z])"
    rf"|{_MONTH_NAME}\s+\d{{1,2}}(?:st|nd|rd|th)?\b"
    r"|\d{4}-\d{1,2}-\d{1,2}\b|\d{1,2}[/.]\d{1,2}[/.]\d{4}\b)"
    # A two-digit year only after a weekday ("(Wed 17.07.24)"): alone, "3.11.24" opening
    # a message may be a version number.
    rf"|{_HEADER}(?:{_WEEKDAY}),?\s*\d{{1,2}}[/.]\d{{1,2}}[/.]\d{{2}}\b",
    re.IGNORECASE,
)
_STAMP_WORDS = (
    frozenset(MONTHS)
    | frozenset(DAYS)
    | {"am", "pm", "a", "p", "m", "at", "of", "the", "on", "st", "nd", "rd", "th"}
    | {"today", "yesterday", "tonight", "morning", "afternoon", "evening", "night"}
)
_STAMP_REST = re.compile(r"[^\W\d_]+")
"""The words a time stamp may hold besides its date and clock time (an upper-case time
zone too): month and weekday names, ordinals' endings, "a.m.", "today"."""
_STAMP = re.compile(r"\s*[\[(]([^\])\n]{1,40})[\])]\s*[:\-\u2013\u2014]?\s*")


def without_stamp(query: str) -> str:
    """``query`` without the time stamp an application put before it ("[Thu 26 Feb
    10:05] When is the pen test?", "(9 June 2023) ..."): the stamp says when the question
    was asked, not what it asks about, and its weekday and month matched every message
    of that day. Only a bracketed date or time opening the text goes; the text is
    unchanged when nothing else is left."""
    found = _STAMP.match(query)
    if found is None:
        return query
    inside = found.group(1)
    dated = _DATELINE.match(inside)
    if not (dated or _CLOCK.search(inside)):
        return query
    # Nothing but the date and time: "(Python 3.11)", "(re: the 10:30 standup)",
    # "[Monday 3 March offsite]" say what the question is about. The date as a dateline
    # reads it (with a header's label: "Session 3, 2 February 2025"), then clock times;
    # left may be ordinals' endings, "a.m.", "today", a time zone (CET, UTC).
    rest = _CLOCK.sub(" ", inside[dated.end() :] if dated else inside)
    for word in _STAMP_REST.findall(rest):
        if word.lower() not in _STAMP_WORDS and not (word.isupper() and 2 <= len(word) <= 5):
            return query
    rest = query[found.end() :]
    return rest if rest.strip() else query


def opens_with_date(text: str) -> bool:
    """Whether ``text`` opens with a date: a sitting's header, a dated entry."""
    return dateline_match(text) is not None


def dateline_match(text: str) -> re.Match[str] | None:
    """The date ``text`` opens with (:func:`opens_with_date`), as a match, else ``None``."""
    return _DATELINE.match(text[:80])


def without_dateline(text: str) -> str:
    """``text`` without the date it opens with (:func:`opens_with_date`), if any."""
    found = dateline_match(text)
    return text[found.end() :] if found else text


WHEN_QUESTION = re.compile(
    r"\b(?:when|what\s+(?:date|day|month|year)|which\s+(?:date|day|month|year)|"
    r"how\s+long\s+(?:ago|after|before|since|until|have|has|had)|"
    r"how\s+many\s+(?:days|weeks|months|years)\s+(?:ago|after|before|since|until|have|has|had))\b",
    re.IGNORECASE,
)
"""A question asking when something happened (not "earlier" or "later in the"), or
how long ago or how long apart: "how long have I had the cat?" and "how long after
moving did I start the job?" are answered by the days the events were told."""
WHEN_SAID = re.compile(
    r"\bwhen\s+(?:did|have)\s+(?:i|we|you)\s+(?:first\s+|last\s+)?"
    r"(?:tell|told|say|said|mention|mentioned|bring|brought|talk|talked|ask|asked|share|shared)\b",
    re.IGNORECASE,
)
"""A question about when something was said: the day it was said answers it, whatever
other date the message names ("I'm back on April 19" told on 2 March)."""
_SHORT_TEXT_WORDS = 40
_CONTEXT_CHARS = 300
"""How much of the previous message a short message's vector is made with."""
_MIN_PASSAGE_WORDS = 6
_DOC_TERMS_KEPT = 4096
"""Documents whose opening term sets an index keeps (:meth:`BM25Index.opening_terms`)."""
OPENING_PASSAGES = 24
"""Passages of a document that :meth:`BM25Index.opening_terms` reads (about 300 words: a
pasted page or a long plan is not read whole for every question)."""
_TEMPLATE_TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_SLOT_WORDS = frozenset(MONTHS) | frozenset(DAYS)
_ASCII_DIGIT = re.compile(r"[0-9]")
_MIN_TEMPLATE_WORDS = 4
"""A passage with fewer words left once its slots are out has no template."""


def template_of(passage: str) -> str | None:
    """``passage`` with its slots (numbers, dates, capitalized words) taken out, or
    ``None`` when too little is left to be a template.

    "Jasper ran 19 kilometres on Sunday." and "Ines ran 13 kilometres on Saturday."
    share one template ("ran kilometres on").
    """
    return _template_parts(passage)[0]


def _template_parts(passage: str) -> tuple[str | None, list[str]]:
    """:func:`template_of` and the capitalized words it took out (numbers aside), in one
    pass: indexing runs it on every passage.

    The same as a loop over the tokens that skips those with a digit (when the passage
    has one), sets the capitalized ones aside and keeps the others' lower case unless a
    month or a weekday, written as comprehensions (tests/test_index_fast_paths.py holds
    that loop and checks both on varied text). A token holds a digit only
    when it is not all letters (no character is both ``isalpha`` and ``isdigit``), so
    the per-character test runs only on the few tokens that are not words; a passage's
    own test for digits is one regex scan when it is ASCII (where ``isdigit`` is 0-9).
    """
    tokens = _TEMPLATE_TOKEN.findall(passage)
    if (
        _ASCII_DIGIT.search(passage) is not None
        if passage.isascii()
        else any(map(str.isdigit, passage))
    ):
        tokens = [t for t in tokens if t.isalpha() or not any(map(str.isdigit, t))]
    capitalized = [t for t in tokens if t[0].isupper()]
    if capitalized:
        tokens = [t for t in tokens if not t[0].isupper()]
    kept = [low for low in map(str.lower, tokens) if low not in _SLOT_WORDS]
    return (" ".join(kept) if len(kept) >= _MIN_TEMPLATE_WORDS else None), capitalized


def split_passages(text: str) -> list[str]:
    """Sentences of a long text (very short ones joined to the next); a short text whole."""
    if len(text.split()) <= _SHORT_TEXT_WORDS:
        return [text]
    passages: list[str] = []
    pending = ""
    for sentence in split_sentences(text):
        pending = f"{pending} {sentence}".strip() if pending else sentence
        if len(pending.split()) >= _MIN_PASSAGE_WORDS:
            passages.append(pending)
            pending = ""
    if pending:
        if passages:
            passages[-1] = f"{passages[-1]} {pending}"
        else:
            passages.append(pending)
    return passages or [text]


def _embedding_units(passages: list[str], unit_words: int) -> list[str]:
    """``passages`` joined into units of up to ``unit_words`` words (0: one each)."""
    units: list[str] = []
    words = 0
    for passage in passages:
        size = len(passage.split())
        if units and words + size <= unit_words:
            units[-1] = f"{units[-1]} {passage}"
            words += size
        else:
            units.append(passage)
            words = size
    return units


_NO_VALUES: frozenset[str] = frozenset()
"""Shared by the passages that state no value (most of them): one object instead of
an empty frozenset each, which the garbage collector would traverse on every full pass."""


def value_tokens(passage: str) -> frozenset[str]:
    """Lower-cased tokens that could answer a question: numbers, months, names."""
    # findall, not a loop over match objects: the pattern has no groups, so it returns
    # the whole matches (indexing runs this on every passage).
    found = VALUE_PATTERN.findall(passage)
    return frozenset(map(str.lower, found)) if found else _NO_VALUES


_Facts = tuple[
    Counter[str], int, frozenset[str], str | None, tuple[str, ...], frozenset[str], bool, bool
]
_FACTS_MAX_CHARS = 2000
"""Passages up to this long have their facts cached (as :func:`content_terms` caches
terms): a longer one is rarely repeated, and would hold its text in the cache."""


def _facts(passage: str) -> _Facts:
    """What indexing reads from ``passage``'s own text, and nothing else: its term
    counts, term count and terms; its template (:func:`template_of`) and the terms of
    the capitalized words the template took out (none without a template); its values
    (:func:`value_tokens`); whether it states a date or a time of day; whether it states
    a change (:func:`has_change_cue`). The caller never changes what it is given.
    """
    terms = content_terms(passage)
    counts = Counter(terms)
    template, capitalized = _template_parts(passage)
    slot_terms: tuple[str, ...] = ()
    if template is not None and capitalized:
        slot_terms = tuple(set(stem_terms([word.lower() for word in capitalized])))
    values = value_tokens(passage)
    has_date = False
    if values:
        dates = values & _DATE_VALUES
        if "may" in dates and not MAY_MONTH.search(passage):
            dates = dates - {"may"}  # "we may need 3 rooms": the verb, not the month
        has_date = bool(dates) or bool(_CLOCK.search(passage))
    # Without a value there is no digit (any digit starts a value match, or sits
    # inside a name's), and a time of day needs one: no date, without a scan.
    return (
        counts,
        len(terms),
        frozenset(counts),
        template,
        slot_terms,
        values,
        has_date,
        has_change_cue(passage),
    )


_FACTS: dict[str, _Facts] = {}
"""Facts of passages indexed twice lately (see :func:`_passage_facts`)."""
_SEEN: set[int] = set()
"""Hashes of the passages indexed lately."""
_FACTS_LIMIT = 4096
_SEEN_LIMIT = 16384


def _passage_facts(passage: str) -> _Facts:
    """:func:`_facts`, remembered for passages (up to :data:`_FACTS_MAX_CHARS` long)
    indexed more than once lately.

    A history repeats passages word for word: templated chatter (the daily "Took my 20
    mg"), pasted logs and tracebacks, greetings, a summary repeating its message's
    sentences. Those are read once or twice, not at every copy: the facts are a function
    of the text alone, so a copy's are the first's (the same objects; the index never
    changes them). A passage is remembered at its second sighting: prose that never
    repeats then costs a hash in a set per passage, not a stored entry (stored entries
    were objects the garbage collector kept traversing: about 4% of the lexical pass
    when nothing repeats). A hash shared by two passages only stores the second early;
    the facts are found by the passage's own text.
    """
    facts = _FACTS.get(passage)
    if facts is not None:
        return facts
    facts = _facts(passage)
    if len(passage) <= _FACTS_MAX_CHARS:
        key = hash(passage)
        if key in _SEEN:
            if len(_FACTS) >= _FACTS_LIMIT:
                _FACTS.clear()
            _FACTS[passage] = facts
        else:
            if len(_SEEN) >= _SEEN_LIMIT:
                _SEEN.clear()
            _SEEN.add(key)
    return facts


def _postings_below(postings: dict[str, list[int]], below: int) -> dict[str, list[int]]:
    """``postings`` (ascending ids per key) with only the ids below ``below``."""
    kept = {}
    for key, ids in postings.items():
        k = bisect.bisect_left(ids, below)
        if k:
            kept[key] = ids[:k]
    return kept


class BM25Index:
    """Okapi BM25 over passages of a growing list of documents (messages).

    ``scores`` returns one score per document: the score of its best passage, raised
    a little when that passage states a value. ``best_passage`` and the per-passage
    flags let callers reason about the passage that matched.
    """

    def __init__(self) -> None:
        self.keys: list[Hashable] = []
        self._postings = Postings()  # term -> (passages, counts)
        self._lengths: list[int] = []
        self._length_totals: list[int] = []
        """Running sums of ``_lengths``: the mean passage length at any length in O(1)."""
        self._owner: list[int] = []
        self.passage_terms: list[frozenset[str]] = []
        self.passage_values: list[frozenset[str]] = []
        self._has_value: list[bool] = []
        self._has_date: list[bool] = []
        self._has_date_array: np.ndarray | None = None
        self._value_postings: dict[str, list[int]] = {}
        self._has_value_array: np.ndarray | None = None
        self._lengths_array: np.ndarray | None = None
        self.passage_has_change: list[bool] = []
        self._doc_terms: dict[int, frozenset[str]] = {}
        """Documents' opening term sets read so far (:meth:`opening_terms`; a document
        never changes)."""
        self.doc_has_change: list[bool] = []
        """Per document: whether one of its passages states a change."""
        self._doc_asks: dict[int, bool] = {}
        self._owner_array: np.ndarray | None = None
        self._passages: list[str] = []
        # Each passage's template (an id; -1: none), and the copy weights of the first
        # ``n`` passages, for the last ``n`` read.
        self._template: list[int] = []
        self._template_ids: dict[str, int] = {}
        self._template_array: np.ndarray | None = None
        # Whether a passage is its document's first with its template: copies are
        # counted in documents, as a term's IDF is (a model's summary appended to a
        # message repeats its sentences, and they are one message, not two copies).
        self._template_first: list[bool] = []
        self._template_first_array: np.ndarray | None = None
        self._copy_weights: tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        self._copy_counts: tuple[int, np.ndarray, np.ndarray, np.ndarray] | None = None
        # Per term, the passages with a template that hold it among the capitalized
        # words the template took out (ascending ids): "Skipped my 20 mg" beside daily
        # "Took my 20 mg" (a sentence's first word is capitalized).
        self._slot_postings: dict[str, list[int]] = {}
        self._filler: list[bool] = []
        self._filler_array: np.ndarray | None = None
        # Each document's speaker (an index into _speaker_names, -1 for none).
        self._speaker: list[int] = []
        self._speaker_ids: dict[str, int] = {}
        self._speaker_names: list[str] = []
        self._speaker_array: np.ndarray | None = None
        self._dateline: list[bool] = []
        self._dateline_array: np.ndarray | None = None
        # Per passage: the question passage it answers (-1: none), for the first passage
        # of a document right after another speaker's short question (the previous
        # document: system messages are not indexed); and per document, its short
        # question's passage (-1: not a short question), read by the next one. Both are
        # final when appended: a reader converting the lists mid-add keeps what it read.
        self._answers: list[int] = []
        self._answers_array: np.ndarray | None = None
        self._asking: list[int] = []
        # Per (model, unit words): unit vectors and their documents, in buffers that
        # grow by doubling (rows beyond the count are unused), so a turn writes only
        # its new rows instead of re-stacking the whole matrix.
        self._vectors: dict[tuple[str, int], tuple[np.ndarray, np.ndarray, int]] = {}
        self._vector_lock = threading.Lock()
        # The vocabulary: one written form per content term (its first, when it is a word
        # of letters), in order of first use, with the passage it first occurs in.
        self._word_passage: list[int] = []
        self._words: list[str] = []
        self._word_first: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.keys)

    def add(self, key: Hashable, text: str, speaker: str | None = None) -> None:
        """Append one document; ``speaker`` names who wrote it, when known (else a
        leading "Name:" of the text is read as its speaker)."""
        doc = len(self.keys)
        passages = split_passages(text)
        first_pid = len(self._owner)
        if speaker is None:
            found = _SPEAKER.match(text[:80])
            speaker = found.group(1) if found else None
        name = speaker.lower() if speaker else None
        sid = self._speaker_ids.get(name, len(self._speaker_names)) if name else -1
        answers = self._answered_passage(doc, sid)
        # A short message (a reply, "I'm excited!") means what it answers: its vector
        # is made with the end of the message before it, so "how did Jon feel about the
        # opening?" finds the reply to "the studio looks amazing, launch tomorrow".
        doc_templates: set[int] = set()
        doc_change = False
        for passage in passages:
            pid = len(self._owner)
            counts, length, terms, template, slot_terms, values, has_date, change = _passage_facts(
                passage
            )
            postings = self._postings
            new = postings.new_terms(counts)
            if new:
                self._add_words(passage, new, pid)
            postings.add(pid, counts)
            self._owner.append(doc)
            self._passages.append(passage)
            if template is None:
                self._template.append(-1)
                self._template_first.append(False)
            else:
                tid = self._template_ids.setdefault(template, len(self._template_ids))
                self._template.append(tid)
                self._template_first.append(tid not in doc_templates)
                doc_templates.add(tid)
                for term in slot_terms:
                    self._slot_postings.setdefault(term, []).append(pid)
            self._lengths.append(length)
            self._length_totals.append(
                length + (self._length_totals[-1] if self._length_totals else 0)
            )
            self.passage_terms.append(terms)
            self.passage_values.append(values)
            self._has_value.append(bool(values))
            self._has_date.append(has_date)
            for value in values:
                self._value_postings.setdefault(value, []).append(pid)
            self.passage_has_change.append(change)
            self._answers.append(answers if pid == first_pid else -1)
            doc_change = doc_change or change
        # Arrays of per-passage columns are rebuilt on demand; readers slice them
        # to their own length, so a longer one serves every earlier length.
        self.doc_has_change.append(doc_change)
        filler = is_filler(text)
        self._filler.append(filler)
        self._dateline.append(opens_with_date(text))
        if name and name not in self._speaker_ids:
            self._speaker_ids[name] = sid
            self._speaker_names.append(name)
        self._speaker.append(sid)
        self._asking.append(-1 if filler else self._question_passage(first_pid, text))
        self.keys.append(key)

    def _answered_passage(self, doc: int, sid: int) -> int:
        """The question passage document ``doc`` (by speaker ``sid``) answers, or -1.

        The document before must be another known speaker's short question. With more
        than two speakers, only the one who spoke just before that question answers it
        (it was asked of them): "Sorry, I started late today." from a third person
        between the question and its answer is no answer.
        """
        if doc == 0 or sid < 0:
            return -1
        asked, them = self._asking[doc - 1], self._speaker[doc - 1]
        if asked < 0 or them < 0 or them == sid:
            return -1
        speakers = len(self._speaker_names) + (sid == len(self._speaker_names))  # a newcomer
        if speakers > 2 and (doc < 2 or self._speaker[doc - 2] != sid):
            return -1
        return asked

    def _question_passage(self, first_pid: int, text: str) -> int:
        """The last passage of a short document that asks (:func:`asks_question`: a
        sentence ending in "?" or opening as a question does), or -1 for a long or
        non-asking document.

        The next document, another speaker's, is read with it (:meth:`score_passages`'
        ``exchanges``): "How's the new job going?" then "I started on Monday, it's
        intense."
        """
        if len(text.split()) >= _EXCHANGE_WORDS:
            return -1
        asking = [p for p in range(first_pid, len(self._owner)) if asks_question(self._passages[p])]
        return asking[-1] if asking else -1

    def prefix(self, docs: int) -> BM25Index:
        """A new index of the first ``docs`` documents, as adding them to an empty one
        would build it, made by copying (this index is left as it is: a reader of its
        longer head keeps it).

        An edited or regenerated last message, or a fork of a long thread, shares all but
        its last few documents with the index the thread built: copying that prefix costs
        a few percent of tokenizing it again (about 2.4 s at 5,000 long messages).
        """
        n_docs, n_pass = self._bound(docs)
        cut = BM25Index()
        cut.keys = self.keys[:n_docs]
        cut._postings = self._postings.prefix(n_pass)
        for name in (
            "_lengths",
            "_length_totals",
            "_owner",
            "passage_terms",
            "passage_values",
            "_has_value",
            "_has_date",
            "passage_has_change",
            "_passages",
            "_template",
            "_template_first",
            "_answers",
        ):
            setattr(cut, name, getattr(self, name)[:n_pass])
        for name in ("doc_has_change", "_filler", "_dateline", "_speaker", "_asking"):
            setattr(cut, name, getattr(self, name)[:n_docs])
        cut._doc_asks = {d: a for d, a in self._doc_asks.items() if d < n_docs}
        cut._value_postings = _postings_below(self._value_postings, n_pass)
        cut._slot_postings = _postings_below(self._slot_postings, n_pass)
        # Ids are given in order of first use, so the prefix's are those below its largest.
        templates = max(cut._template, default=-1) + 1
        cut._template_ids = {t: i for t, i in self._template_ids.items() if i < templates}
        speakers = max(cut._speaker, default=-1) + 1
        cut._speaker_names = self._speaker_names[:speakers]
        cut._speaker_ids = {n: i for n, i in self._speaker_ids.items() if i < speakers}
        words = bisect.bisect_left(self._word_passage, n_pass)
        cut._word_passage = self._word_passage[:words]
        cut._words = self._words[:words]
        cut._word_first = {w: p for w, p in self._word_first.items() if p < n_pass}
        with self._vector_lock:
            for key, (matrix, owner, rows) in self._vectors.items():
                keep = int(np.searchsorted(owner[:rows], n_docs))
                if keep:
                    cut._vectors[key] = (matrix[:keep].copy(), owner[:keep].copy(), keep)
        return cut

    def _add_words(self, passage: str, new: list[str], pid: int) -> None:
        """Record a written form of each ``new`` term of ``passage`` that is a word."""
        fresh = set(new)
        for token in tokenize(passage):
            if len(token) > 2 and token.isalpha():
                stems = stem_terms([token])
                if stems and stems[0] in fresh:
                    fresh.discard(stems[0])
                    # The passage first: a reader takes len(_words) as its snapshot.
                    self._word_first[token] = pid
                    self._word_passage.append(pid)
                    self._words.append(token)
                    if not fresh:
                        return

    def scores(self, query: str) -> np.ndarray:
        """Best-passage BM25 score of every document (zeros when nothing matches)."""
        return self.score_passages(query)[0]

    def head(self, docs: int) -> IndexHead:
        """The first ``docs`` documents, read as an index of only those."""
        return IndexHead(self, docs)

    def _bound(self, docs: int | None) -> tuple[int, int]:
        """(documents, passages) of the first ``docs`` documents (``None``: all so far)."""
        n_docs = len(self.keys)  # snapshot: another thread may be appending
        if docs is not None and docs < n_docs:
            n_docs = max(docs, 0)
        # Passages of a document still being added (owner >= n_docs) are left out.
        return n_docs, bisect.bisect_left(self._owner, n_docs, 0, len(self._owner))

    def score_passages(
        self,
        query: str,
        docs: int | None = None,
        related: Mapping[str, float] | None = None,
        told_apart: bool = True,
        exchanges: bool = False,
    ) -> tuple[np.ndarray, np.ndarray]:
        """(score per document, index of its best passage or -1), of the first ``docs``.

        ``related`` maps further words to their weight in the query (a query word weighs
        1): words related in meaning to the query's, scored in the same passages.
        ``told_apart``: a copy of a recurring template that a capitalized word of the
        query tells apart from most of its copies keeps its weight. Right for a person's
        question ("did I skip a dose?"); not for a query made of a matched passage's own
        words (the selector's name bridges and hops), which would lift every copy opening
        with one of them ("Kofi's train got in at 7:10 pm" for a bridge on "Kofi").
        ``exchanges``: a reply's opening passage that holds a word of the query (related
        words do not count; its speaker's name, in a "Name:" line, does) is scored with
        the other speaker's short question it answers as one passage, when that scores
        higher: "When did Maria start her new job?" finds "I started on Monday" after
        "How's the new job going?" (each alone holds half of the question's words).
        """
        n_docs, n = self._bound(docs)
        if n_docs == 0:
            return np.zeros(0), np.zeros(0, dtype=np.int64)
        owner = self._owner_array
        if owner is None or len(owner) < n:
            owner = self._owner_array = _extended(owner, self._owner, np.int64)
        owner = owner[:n]
        passage = self._passage_scores(query, n, related, exchanges)
        best = np.full(n_docs, -1, dtype=np.int64)
        doc_scores = np.zeros(n_docs, dtype=np.float64)
        hits = np.flatnonzero(passage > 0)
        if not hits.size:
            return doc_scores, best
        # A matching passage that also holds a candidate answer (a number, date or name
        # the question does not contain) states something; one without only talks about it.
        has_value = self._has_value_array
        if has_value is None or len(has_value) < n:
            has_value = self._has_value_array = _extended(has_value, self._has_value, bool)
        boost = has_value[hits]
        # A copy of a recurring template weighs less, unless one of its slots is a value
        # the query names: then its slots tell the copies apart.
        weights, templates, passages, newest = self._copies_weight(n)
        copies = weights[hits]
        if _LATEST_QUESTION.search(query):
            # The newest copy of a routine line ("Looks good: 231 passed...") is what a
            # question about the latest one asks for: it keeps its weight, older copies
            # stay weighed as copies.
            copies[newest[hits]] = 1.0
        # Passages whose only values are ones the query already names get no boost; only
        # passages holding a value the query mentions need a closer look.
        asked = {t.lower() for t in tokenize(query)}
        for value in asked & self._value_postings.keys():
            pids = np.asarray(self._value_postings[value], dtype=np.int64)
            slots, pids = _among(hits, pids)
            copies[slots] = 1.0
            for slot, pid in zip(slots.tolist(), pids.tolist(), strict=True):
                if not (self.passage_values[pid] - asked):
                    boost[slot] = False
        # So does a copy told apart from most of its template's by a capitalized word
        # the query asks for: "Skipped my 20 mg of lisinopril" among daily "Took my 20
        # mg of lisinopril" for "did I skip a dose?". A word most copies hold ("Parents'
        # evening is..." in every copy) tells none apart.
        lifted = set(content_terms(query)) & self._slot_postings.keys() if told_apart else ()
        for term in lifted:
            pids = np.asarray(self._slot_postings[term], dtype=np.int64)
            pids = pids[: np.searchsorted(pids, n)]
            if not pids.size:
                continue
            held = np.bincount(templates[pids], minlength=len(passages))
            rare = pids[2 * held[templates[pids]] <= passages[templates[pids]]]
            copies[_among(hits, rare)[0]] = 1.0
        if _DATE_QUESTION.search(query) and not _OTHER_QUESTION.search(query):
            # A question about a date or time ("when is...", "what time...", "which is
            # earlier...") is answered by a passage holding one, not by one holding any
            # other number or name.
            has_date = self._has_date_array
            if has_date is None or len(has_date) < n:
                has_date = self._has_date_array = _extended(has_date, self._has_date, bool)
            boost &= has_date[hits]
        values = passage[hits]
        values[boost] *= VALUE_BOOST
        values *= copies
        # Each document's best passage (a document's passages are contiguous and in
        # order): a segmented max over the runs of hits, no sort. On a tie the later
        # passage is the best one.
        doc_of = owner[hits]
        starts = np.flatnonzero(np.concatenate(([True], doc_of[1:] != doc_of[:-1])))
        maxima = np.maximum.reduceat(values, starts)
        run_max = np.repeat(maxima, np.diff(np.append(starts, len(values))))
        last_best = np.maximum.reduceat(np.where(values == run_max, hits, -1), starts)
        doc_scores[doc_of[starts]] = maxima
        best[doc_of[starts]] = last_best
        return doc_scores, best

    def _copies_weight(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """For the first ``n`` passages: each one's weight, 1 / (1 + ln copies), copies =
        the documents holding its template (1 for a passage without one); each one's
        template id (0 for none: read only where a template is known); the passages per
        template id; and whether each is the newest passage of its template.

        Like a term's IDF, at the level of sentences: a line of chatter that recurs with
        its slots changed says little about any one message that holds it.
        """
        cached = self._copy_weights
        if cached is not None and cached[0] == n:
            return cached[1], cached[2], cached[3], cached[4]
        templates = self._template_array
        if templates is None or len(templates) < n:
            templates = self._template_array = _extended(templates, self._template, np.int64)
        first = self._template_first_array
        if first is None or len(first) < n:
            first = self._template_first_array = _extended(first, self._template_first, bool)
        ids = templates[:n]
        has = ids >= 0
        size = len(self._template_ids) or 1
        documents, passages, last = self._copy_counts_upto(n, templates, first, size)
        known = np.where(has, ids, 0)
        # Weights by template, then one gather: the same operations on the same counts
        # as per passage (1 / (1 + ln 1) is 1.0 for a passage without a template).
        table = 1.0 / (1.0 + np.log(np.maximum(documents, 1).astype(np.float64)))
        weights = np.where(has, table[known], 1.0)
        newest = np.zeros(n, dtype=bool)
        newest[last[last >= 0]] = True
        for array in (weights, known, newest):
            array.flags.writeable = False
        self._copy_weights = (n, weights, known, passages, newest)
        return weights, known, passages, newest

    def _copy_counts_upto(
        self, n: int, templates: np.ndarray, first: np.ndarray, size: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per template id (``size`` of them), over the first ``n`` passages: the
        documents and the passages holding it, and its last passage (-1: none).

        Extended from the last counts when those were of fewer passages (a turn adds a
        few): counting every passage again was most of a selection's copy weights at
        50,000 messages. The arrays are new each time (readers may hold the last ones).
        """
        counts = self._copy_counts
        if counts is not None and counts[0] <= n:
            start, documents, passages, last = counts
            size = max(size, len(documents))  # (another reader may have seen more ids)
        else:
            start = 0
            documents = passages = np.zeros(0, dtype=np.int64)
            last = np.full(0, -1, dtype=np.int64)
        ids = templates[start:n]
        has = np.flatnonzero(ids >= 0)
        documents = _padded(documents, size, 0) + np.bincount(ids[first[start:n]], minlength=size)
        passages = _padded(passages, size, 0) + np.bincount(ids[has], minlength=size)
        last = _padded(last, size, -1)
        # Passages are in order: assigned in order, each template's last position wins.
        last[ids[has]] = start + has
        for array in (documents, passages, last):
            array.flags.writeable = False
        self._copy_counts = (n, documents, passages, last)
        return documents, passages, last

    def passage_vectors(
        self, embeddings: Embeddings, model: str, unit_words: int = 0, docs: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(unit vectors, the document of each) by ``embeddings`` (``model`` names it).

        A unit is a passage, or consecutive passages of one message joined up to
        ``unit_words`` words (a static model averages word vectors, and a few sentences
        give it more to average than one; the packaged MiniLM is read that way too). A
        message of a single unit is embedded with the end of the message before it: a
        reply ("I'm excited!") means what it answers.

        Embedding passages rather than whole messages is what lets a paraphrased fact
        inside a long message be found (a message vector averages it away with the
        chatter around it). Vectors are kept with the index and, per message, in a
        process-wide cache: a turn that appends two messages embeds their passages
        only, and another index over the same messages (another thread's view) reuses
        them. Only the units of the first ``docs`` documents are returned.
        """
        key = (model, unit_words)
        with self._vector_lock:
            n_docs = len(self.keys)  # snapshot: another thread may be appending
            matrix, owner, rows = self._vectors.get(
                key, (np.zeros((0, 0), dtype=np.float32), np.zeros(0, dtype=np.int64), 0)
            )
            have_docs = int(owner[rows - 1]) + 1 if rows else 0
            if have_docs < n_docs:
                units: list[tuple[str, ...]] = []
                for doc in range(have_docs, n_docs):
                    passages = [self._passages[p] for p in self.doc_passages(doc)]
                    joined = _embedding_units(passages, unit_words)
                    if len(joined) == 1 and doc > 0:
                        before = self._passages[self.doc_passages(doc - 1).stop - 1]
                        joined[0] = f"{before[-_CONTEXT_CHARS:]}\n{joined[0]}"
                    units.append(tuple(joined))
                fresh = _cached_vectors(embeddings, model, units)
                new_owner = np.repeat(np.arange(have_docs, n_docs), [len(u) for u in units])
                matrix, owner = _grown(matrix, owner, rows, fresh, new_owner)
                rows += len(new_owner)
                self._vectors[key] = (matrix, owner, rows)
        if docs is not None and docs < n_docs:
            rows = int(np.searchsorted(owner[:rows], docs))
        return matrix[:rows], owner[:rows]

    def vocabulary(self, passages: int | None = None, start: int = 0) -> list[str]:
        """One written form of each word-like term (letters only, at least three), in
        order of first use, of the first ``passages`` passages (``None``: all so far),
        from the ``start``-th on (the vocabulary only grows: a caller reads what is new).
        """
        n = len(self._words)  # snapshot: another thread may be appending
        if passages is not None:
            n = bisect.bisect_left(self._word_passage, passages, 0, n)
        return self._words[start:n]

    def first_passage(self, word: str) -> int | None:
        """The passage where ``word`` (a form :meth:`vocabulary` lists) first occurs."""
        return self._word_first.get(word)

    def filler(self, docs: int | None = None) -> np.ndarray:
        """Which documents are acknowledgements only ("Noted.", "Reply 8."); read-only."""
        n, _ = self._bound(docs)
        cached = self._filler_array
        if cached is None or len(cached) < n:
            cached = self._filler_array = _extended(cached, self._filler, bool)
        return cached[:n]

    def datelines(self, docs: int | None = None) -> np.ndarray:
        """Which documents open with a date (a sitting's header, a dated entry)."""
        n, _ = self._bound(docs)
        cached = self._dateline_array
        if cached is None or len(cached) < n:
            cached = self._dateline_array = _extended(cached, self._dateline, bool)
        return cached[:n]

    def speakers(self, docs: int | None = None) -> tuple[np.ndarray, list[str]]:
        """Each document's speaker id (-1: none) and the lower-cased speaker names."""
        n, _ = self._bound(docs)
        cached = self._speaker_array
        if cached is None or len(cached) < n:
            cached = self._speaker_array = _extended(cached, self._speaker, np.int32)
        return cached[:n], self._speaker_names

    def doc_max(
        self, unit_values: np.ndarray, owner: np.ndarray, docs: int | None = None
    ) -> np.ndarray:
        """The max of ``unit_values`` per document (``owner`` gives each unit's).

        Units come in document order, so each document's are one run: a segmented
        ``maximum.reduceat`` (``maximum.at`` scatters one unit at a time).
        """
        best = np.full(self._bound(docs)[0], -np.inf)
        owner = owner[: len(unit_values)]
        if not len(owner):
            return best
        starts = np.flatnonzero(np.concatenate(([True], owner[1:] != owner[:-1])))
        best[owner[starts]] = np.maximum.reduceat(unit_values, starts)
        return best

    @property
    def passage_count(self) -> int:
        """Passages indexed so far."""
        return len(self._owner)

    def passage_frequency(self, term: str, passages: int | None = None) -> int:
        """In how many passages ``term`` (a content term, as ``content_terms`` gives) occurs
        (among the first ``passages``)."""
        return self._postings.df(term, passages)

    def passages_with(
        self,
        term: str,
        passages: int | None = None,
        limit: int | None = None,
        *,
        newest: bool = False,
    ) -> list[int]:
        """Ids of the passages holding ``term`` (a content term), among the first
        ``passages``, in order (the first ``limit`` of them; with ``newest``, the last
        ``limit``, latest first): read from the postings, not by scanning."""
        arrays = self._postings.arrays(term)
        if arrays is None:
            return []
        rows = arrays[0]
        if passages is not None and len(rows) and rows[-1] >= passages:
            rows = rows[: int(np.searchsorted(rows, passages))]
        if newest:
            rows = rows[::-1]
        if limit is not None:
            rows = rows[:limit]  # a frequent term's list is long: convert what is read
        return [int(row) for row in rows]

    def doc_of(self, passage: int) -> int:
        """The document that ``passage`` belongs to."""
        return self._owner[passage]

    def doc_passages(self, doc: int) -> range:
        """Passage ids of document ``doc`` (a document's passages are contiguous)."""
        n = len(self._owner)  # snapshot: another thread may be appending
        return range(
            bisect.bisect_left(self._owner, doc, 0, n), bisect.bisect_right(self._owner, doc, 0, n)
        )

    def opening_terms(self, doc: int) -> frozenset[str]:
        """The content terms of document ``doc``'s first :data:`OPENING_PASSAGES` passages.

        Kept once read (at most :data:`_DOC_TERMS_KEPT` documents, then read anew): a
        reply ranking for many questions is read for them each time.
        """
        found = self._doc_terms.get(doc)
        if found is None:
            passages = self.doc_passages(doc)[:OPENING_PASSAGES]
            found = frozenset().union(*(self.passage_terms[p] for p in passages))
            if len(self._doc_terms) >= _DOC_TERMS_KEPT:
                self._doc_terms.clear()
            self._doc_terms[doc] = found
        return found

    def doc_asks(self, doc: int) -> bool:
        """Whether a passage of document ``doc`` holds a "?" or its first passage reads
        as a question (``is_question``). Memoized: a document's passages never change."""
        asks = self._doc_asks.get(doc)
        if asks is None:
            texts = self._passages
            own = self.doc_passages(doc)
            asks = any("?" in texts[p] for p in own) or (bool(own) and is_question(texts[own[0]]))
            if doc < len(self.keys):  # a document still being added is not memoized
                self._doc_asks[doc] = asks
        return asks

    def passage_text(self, passage: int) -> str:
        """The text of ``passage`` (an id from :meth:`score_passages`).

        Example:
            >>> index = BM25Index()
            >>> index.add("m1", "Short note about lunch.")
            >>> scores, best = index.score_passages("lunch")
            >>> index.passage_text(int(best[0]))
            'Short note about lunch.'
        """
        return self._passages[passage]

    def _passage_scores(
        self,
        query: str,
        n: int,
        related: Mapping[str, float] | None = None,
        exchanges: bool = False,
    ) -> np.ndarray:
        """BM25 of each of the first ``n`` passages; only the query terms' postings are read.

        With ``exchanges``, a reply's opening passage holding a query word scores at
        least as its exchange would: its terms and its question's counted together over
        their joint length (BM25 of the two passages read as one).
        """
        result = np.zeros(n, dtype=np.float64)
        if n == 0:
            return result
        lengths = self._lengths_array
        if lengths is None or len(lengths) < n:
            lengths = self._lengths_array = _extended(lengths, self._lengths, np.float64)
        avg = (self._length_totals[n - 1] / n) or 1.0
        weights: dict[str, float] = dict(Counter(content_terms(query)))
        own = frozenset(weights)  # the query's own terms, before related words join
        for word, weight in (related or {}).items():
            for term in content_terms(word):
                if term not in weights:
                    weights[term] = weight
        counted: list[tuple[float, np.ndarray, np.ndarray]] = []
        said = np.zeros(n, dtype=bool) if exchanges else None
        for term, qtf in weights.items():
            arrays = self._postings.arrays(term)
            if arrays is None:
                continue
            docs, tfs = arrays
            if len(docs) and docs[-1] >= n:  # passages added after this reader's length
                cut = int(np.searchsorted(docs, n))
                docs, tfs = docs[:cut], tfs[:cut]
            df = len(docs)
            if df == 0:
                continue
            idf = robertson_idf(n, df)
            norm = _K1 * (1.0 - _B + _B * lengths[docs] / avg)
            result[docs] += qtf * idf * tfs * (_K1 + 1.0) / (tfs + norm)
            if said is not None:
                counted.append((qtf * idf, docs, tfs))
                if term in own:
                    said[docs] = True
        if said is not None and counted:
            answers = self._answers_array
            if answers is None or len(answers) < n:
                answers = self._answers_array = _extended(answers, self._answers, np.int64)
            answers = answers[:n]
            replies = np.flatnonzero(answers >= 0)
            # A question matching nothing adds nothing (same counts over a longer length).
            replies = replies[said[replies] & (result[answers[replies]] > 0)]
            if replies.size:
                exchange = _exchange_scores(replies, answers[replies], counted, lengths, avg, n)
                result[replies] = np.maximum(result[replies], exchange)
        return result


def _exchange_scores(
    replies: np.ndarray,
    questions: np.ndarray,
    counted: list[tuple[float, np.ndarray, np.ndarray]],
    lengths: np.ndarray,
    avg: float,
    n: int,
) -> np.ndarray:
    """BM25 of each reply passage and its question passage read as one passage.

    ``counted`` holds each query term's weight and postings (passages, counts);
    ``lengths`` the passages' term counts, ``avg`` their mean, over ``n`` passages.
    """
    norm = _K1 * (1.0 - _B + _B * (lengths[replies] + lengths[questions]) / avg)
    scores = np.zeros(len(replies), dtype=np.float64)
    counts = np.zeros(n, dtype=np.float64)  # one term's counts at a time, then cleared
    for weight, docs, tfs in counted:
        counts[docs] = tfs
        tf = counts[replies] + counts[questions]
        scores += weight * tf * (_K1 + 1.0) / (tf + norm)
        counts[docs] = 0.0
    return scores


def _doc_key(model: str, doc: tuple[str, ...]) -> bytes:
    """The cache key of one message's passages: a digest, not the texts (keyed by the
    texts, a row cost about 2 KB instead of 0.5: the texts, and the 300 characters of
    context a one-passage message is embedded with, were held twice)."""
    digest = hashlib.blake2b(model.encode("utf-8", "surrogatepass"), digest_size=16)
    for text in doc:
        digest.update(b"\x1f")
        digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.digest()


class _VectorCache:
    """Passage vectors per (model, message passages), least recently used out first.

    Bounded by rows (float16: 250,000 rows are about 130 MB at 256 dimensions, keys
    included).
    """

    def __init__(self, limit: int = 250_000) -> None:
        self.limit = limit
        self._rows = 0
        self._items: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, keys: list[bytes]) -> list[np.ndarray | None]:
        with self._lock:
            found = [self._items.get(key) for key in keys]
            for key, hit in zip(keys, found, strict=True):
                if hit is not None:
                    self._items.move_to_end(key)
            return found

    def put(self, made: dict[bytes, np.ndarray]) -> None:
        with self._lock:
            for key, vectors in made.items():
                if key not in self._items:
                    self._items[key] = vectors
                    self._rows += len(vectors)
            while self._rows > self.limit and self._items:
                _, evicted = self._items.popitem(last=False)
                self._rows -= len(evicted)


_VECTORS = _VectorCache()


def _cached_vectors(embeddings: Embeddings, model: str, docs: list[tuple[str, ...]]) -> np.ndarray:
    """Unit vectors of the passages of ``docs`` (each a tuple of passage texts), in order.

    Documents seen before (by their passage texts and the model) come from the cache;
    the rest are embedded in one call.
    """
    keys = [_doc_key(model, doc) for doc in docs]
    found = _VECTORS.get(keys)
    missing = [(key, doc) for key, doc, hit in zip(keys, docs, found, strict=True) if hit is None]
    texts = [text for _, doc in missing for text in doc]
    if texts:
        raw = unit_vectors(embeddings, texts)
        start = 0
        made: dict[bytes, np.ndarray] = {}
        for key, doc in missing:
            made[key] = raw[start : start + len(doc)].astype(np.float16)
            start += len(doc)
        _VECTORS.put(made)
        found = [made[key] if hit is None else hit for key, hit in zip(keys, found, strict=True)]
    rows = [hit for hit in found if hit is not None]
    if not rows:
        return np.zeros((0, 0), dtype=np.float32)
    return np.concatenate(rows).astype(np.float32)


def _among(hits: np.ndarray, pids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(slots in ``hits``, passage ids) of those of ``pids`` that ``hits`` holds (both
    ascending), by bisection."""
    slots = np.searchsorted(hits, pids)
    found = slots < len(hits)
    found[found] = hits[slots[found]] == pids[found]
    return slots[found], pids[found]


def _padded(counts: np.ndarray, size: int, fill: int) -> np.ndarray:
    """A new copy of ``counts`` (int64) of length ``size``, the added places ``fill``."""
    padded = np.full(size, fill, dtype=np.int64)
    padded[: len(counts)] = counts
    return padded


def _extended(cached: np.ndarray | None, values: list[Any], dtype: Any) -> np.ndarray:
    """``values`` as a read-only array, converting only what ``cached`` does not hold.

    The per-passage lists only grow, so last turn's array is a prefix of this turn's
    (extended in place of a buffer with room: :func:`appended`).
    """
    done = 0 if cached is None else len(cached)
    return appended(cached, np.asarray(values[done:], dtype=dtype))


def _grown(
    matrix: np.ndarray, owner: np.ndarray, rows: int, fresh: np.ndarray, new_owner: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Buffers holding ``rows`` old rows plus the new ones (doubled when full).

    Rows below ``rows`` are never written again, so a caller still reading the old
    buffers (or a slice of these) sees what it saw.
    """
    need = rows + len(new_owner)
    if not len(new_owner):
        return matrix, owner
    if need > len(owner) or matrix.shape[1:] != fresh.shape[1:]:
        capacity = max(need, 2 * len(owner), 64)
        grown = np.empty((capacity, fresh.shape[1]), dtype=np.float32)
        grown_owner = np.empty(capacity, dtype=np.int64)
        if rows:
            grown[:rows] = matrix[:rows]
            grown_owner[:rows] = owner[:rows]
        matrix, owner = grown, grown_owner
    matrix[rows:need] = fresh
    owner[rows:need] = new_owner
    return matrix, owner


class IndexHead:
    """The first ``docs`` documents of a :class:`BM25Index`, read as an index of their own.

    Scores, passage statistics and vectors are exactly those of an index built from
    those documents alone, whatever was appended to the underlying index since.
    """

    def __init__(self, index: BM25Index, docs: int) -> None:
        self.index = index
        self.docs, self.passage_count = index._bound(docs)
        # Passage ids below passage_count are the same in both.
        self.passage_terms = index.passage_terms
        self.passage_has_change = index.passage_has_change
        self.doc_has_change = index.doc_has_change

    def __len__(self) -> int:
        return self.docs

    def score_passages(
        self,
        query: str,
        related: Mapping[str, float] | None = None,
        told_apart: bool = True,
        exchanges: bool = False,
    ) -> tuple[np.ndarray, np.ndarray]:
        return self.index.score_passages(query, self.docs, related, told_apart, exchanges)

    def scores(self, query: str) -> np.ndarray:
        return self.score_passages(query)[0]

    def filler(self) -> np.ndarray:
        return self.index.filler(self.docs)

    def speakers(self) -> tuple[np.ndarray, list[str]]:
        return self.index.speakers(self.docs)

    def datelines(self) -> np.ndarray:
        return self.index.datelines(self.docs)

    def passage_vectors(
        self, embeddings: Embeddings, model: str, unit_words: int = 0
    ) -> tuple[np.ndarray, np.ndarray]:
        return self.index.passage_vectors(embeddings, model, unit_words, self.docs)

    def vocabulary(self, start: int = 0) -> list[str]:
        return self.index.vocabulary(self.passage_count, start)

    def has_word(self, word: str) -> bool:
        """Whether ``word`` (a form :meth:`vocabulary` lists) occurs in these documents."""
        first = self.index.first_passage(word)
        return first is not None and first < self.passage_count

    def doc_max(self, unit_values: np.ndarray, owner: np.ndarray) -> np.ndarray:
        return self.index.doc_max(unit_values, owner, self.docs)

    def doc_passages(self, doc: int) -> range:
        return self.index.doc_passages(doc)

    def opening_terms(self, doc: int) -> frozenset[str]:
        return self.index.opening_terms(doc)

    def passages_with(
        self, term: str, limit: int | None = None, *, newest: bool = False
    ) -> list[int]:
        return self.index.passages_with(term, self.passage_count, limit, newest=newest)

    def doc_of(self, passage: int) -> int:
        return self.index.doc_of(passage)

    def doc_asks(self, doc: int) -> bool:
        return self.index.doc_asks(doc)

    def passage_text(self, passage: int) -> str:
        return self.index.passage_text(passage)

    def passage_frequency(self, term: str) -> int:
        return self.index.passage_frequency(term, self.passage_count)
