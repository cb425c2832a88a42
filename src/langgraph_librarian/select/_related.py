"""Words of the history related in meaning to a question's words (static word vectors).

A question and the message that answers it often name one thing with different words
("isle" / "island", "dog" / "puppy"). A model that sums word vectors (the packaged
static model) holds a vector per word, and words close in that space are related. The
candidates are the words the history itself uses (the lexical index's vocabulary): a
related word the history never uses can match nothing, so none of the at most
:data:`PER_WORD` places a question word has goes to one. Each question word brings the
history's words at cosine :data:`MIN_SIMILARITY` or more (the :data:`SKIP_COMMON` most
frequent English words: :data:`COMMON_MIN_SIMILARITY`) into the lexical query,
weighted by that cosine (a question word weighs 1). Passages are scored by the
question's words and these together, so a passage naming the thing in other words is
found by BM25, not only by the (weak) sentence vector.

Weekday and month names are never related words: a question about "the weekend" or
"the date" is not about every message that names a Sunday or a June (they are the
values questions ask for, and the conversation is full of them).

The history's word vectors are embedded once per index and model as the history grows,
and a question word's matches are kept with the index (see
:meth:`~langgraph_librarian.select.lexical.BM25Index.similar_words`).
"""

from __future__ import annotations

import re
import threading
import weakref
from functools import cache, lru_cache
from itertools import islice

import numpy as np
from langchain_core.embeddings import Embeddings

from langgraph_librarian._engine.static import frequent_words
from langgraph_librarian._engine.text import (
    DAYS,
    MEMO_TEXT_CHARS,
    MONTHS,
    STOPWORDS,
    content_terms,
    tokenize,
)
from langgraph_librarian._engine.vectors import dot_rows, unit_vectors
from langgraph_librarian.select.lexical import BM25Index, IndexHead

__all__ = [
    "MIN_SIMILARITY",
    "PER_WORD",
    "initialisms",
    "learn_words",
    "names_by_role",
    "related_words",
]

MIN_SIMILARITY = 0.5
"""Cosine a word of the history needs with a question word to count as related."""
PER_WORD = 12
"""At most this many related words per question word."""
SKIP_COMMON = 300
"""The most frequent words ("long", "way", "work", "live") bring only their close
related words (:data:`COMMON_MIN_SIMILARITY`): their neighbours are mostly other
frequent words, noise for the query."""
COMMON_MIN_SIMILARITY = 0.65
"""The bar for the related words of the :data:`SKIP_COMMON` most frequent words ("work"
-> "job" 0.66, "home" -> "house" 0.72, "city" -> "town" 0.64 stays out)."""
_TABLE_WORDS = 100_000
"""Words whose vectors a model's table holds (100 MB at 256 dimensions); beyond, it
starts anew (and every history's words are embedded again, as they are asked about)."""


@cache
def _common() -> frozenset[str]:
    """The :data:`SKIP_COMMON` most frequent English words (BERT's vocabulary order)."""
    return frozenset(frequent_words(SKIP_COMMON))


class _WordTable:
    """One model's unit vectors of the words histories use, shared by all histories,
    and each question word's matches among them (at :data:`MIN_SIMILARITY` or more).

    A word is embedded once per process however many histories use it, and a question
    word's matches are kept: when words are added, it is compared with those only.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.generation = 0
        self._reset()
        self.histories: weakref.WeakKeyDictionary[BM25Index, tuple[int, int]] = (
            weakref.WeakKeyDictionary()
        )
        """Per index: (generation, how many of its words the table holds)."""

    def _reset(self) -> None:
        self.generation += 1
        self.rows: dict[str, int] = {}
        self.words: list[str] = []
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.matches: dict[str, tuple[int, np.ndarray, np.ndarray]] = {}
        """Question word -> (table rows compared, rows at MIN_SIMILARITY or more, cosines)."""

    def take(self, embeddings: Embeddings, head: IndexHead) -> None:
        """Add the words of ``head`` that the table does not hold yet."""
        with self.lock:
            generation, done = self.histories.get(head.index, (0, 0))
            if generation != self.generation:
                done = 0
            words = head.vocabulary(done)
            if not words and generation == self.generation:
                return
            new = [w for w in words if w not in self.rows]
            # Full: other histories' words make way. A history that alone outgrows the
            # table (it holds nothing else) keeps growing it instead of starting anew
            # on every question.
            if len(self.words) + len(new) > _TABLE_WORDS and len(self.words) > done:
                self._reset()
                words = head.vocabulary()
                new = list(words)
                done = 0
            if new:
                vectors = unit_vectors(embeddings, new)
                size = len(self.words)
                need = size + len(new)
                matrix = self.matrix
                if need > len(matrix) or matrix.shape[1:] != vectors.shape[1:]:
                    grown = np.empty(
                        (max(need, 2 * len(matrix), 1024), vectors.shape[1]), dtype=np.float32
                    )
                    if size:
                        grown[:size] = matrix[:size]
                    matrix = grown
                # Rows below ``size`` are never written again: a reader holding the old
                # buffer sees what it saw.
                matrix[size:need] = vectors
                self.matrix = matrix
                self.rows.update(zip(new, range(size, need), strict=True))
                self.words.extend(new)
            self.histories[head.index] = (self.generation, done + len(words))

    def similar(self, embeddings: Embeddings, words: list[str]) -> list[list[tuple[str, float]]]:
        """Per word: the table's words at cosine :data:`MIN_SIMILARITY` or more, best first."""
        with self.lock:
            generation, matrix, table = self.generation, self.matrix, self.words
            size = len(table)
            empty = (0, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))
            known = {word: self.matches.get(word, empty) for word in words}
        stale = [word for word, (done, _, _) in known.items() if done < size]
        if stale:
            for word, vector in zip(stale, unit_vectors(embeddings, stale), strict=True):
                done, rows, sims = known[word]
                fresh = dot_rows(matrix[done:size], vector)
                hits = np.flatnonzero(fresh >= MIN_SIMILARITY)
                known[word] = (
                    size,
                    np.concatenate([rows, hits + done]),
                    np.concatenate([sims, fresh[hits]]),
                )
            with self.lock:
                if self.generation == generation:
                    if len(self.matches) + len(stale) > _TABLE_WORDS:
                        self.matches.clear()
                    self.matches.update({word: known[word] for word in stale})
        found = []
        for word in words:
            _, rows, sims = known[word]
            order = np.argsort(-sims, kind="stable")
            pairs = zip(rows[order].tolist(), sims[order].tolist(), strict=True)
            found.append([(table[row], sim) for row, sim in pairs])
        return found


_TABLES: dict[str, _WordTable] = {}
_LOCK = threading.Lock()


def _table(model: str) -> _WordTable:
    with _LOCK:
        table = _TABLES.get(model)
        if table is None:
            table = _TABLES[model] = _WordTable()
        return table


def learn_words(embeddings: Embeddings, model: str, index: IndexHead) -> None:
    """Embed the words of ``index`` that ``model``'s table does not hold yet (a
    selection does it on demand; warming the index moves it off the next question)."""
    _table(model).take(embeddings, index)


def related_words(
    embeddings: Embeddings, model: str, query: str, index: IndexHead
) -> dict[str, float]:
    """Words of ``index``'s text related to the query's words -> their weight (cosine).

    Words whose term is already the query's, and weekday and month names, are left out;
    a word related to two question words weighs its higher cosine.
    """
    terms = set(content_terms(query))
    common = _common()
    words = [
        w
        for w in dict.fromkeys(tokenize(query))
        if len(w) > 2 and w.isalpha() and w not in STOPWORDS
    ]
    # The question's words it writes in lower case (a capital may open a sentence or a
    # name: "Bank" is left alone).
    common_nouns = {m.group() for m in _WORD.finditer(query) if m.group().islower()}
    out: dict[str, float] = {}
    if not words:
        return out
    table = _table(model)
    table.take(embeddings, index)
    for word, similar in zip(words, table.similar(embeddings, words), strict=True):
        # A frequent word's neighbours are mostly other frequent words: only its close
        # ones count ("work" brings "job" at 0.66, not "office" at 0.32).
        bar = COMMON_MIN_SIMILARITY if word in common else MIN_SIMILARITY
        kept = 0
        for other, similarity in similar:
            if kept == PER_WORD:
                break
            stems = content_terms(other)
            if (
                not stems
                or similarity < bar
                or stems[0] in terms
                or other in DAYS
                or other in MONTHS
                or not index.has_word(other)
            ):
                continue
            # A common noun brings a name that holds it ("bank" -> "Northbank", "mail"
            # -> "Mailchimp") at half its similarity: the static model builds an unknown
            # name's vector from its pieces, so the two look close whether the name is
            # what the question asks for (the mail service) or merely holds the word (a
            # bar by the river). A name related in meaning ("basketball" -> "NBA") and a
            # word the question writes as a name keep theirs.
            if (
                (word in other or other in word)
                and word in common_nouns
                and written_as_name(other, stems[0], index)
            ):
                similarity *= NAME_WEIGHT  # (and takes no slot from a related word)
            else:
                kept += 1
            out[other] = max(out.get(other, 0.0), similarity)
    return out


NAME_WEIGHT = 0.5
"""The share of its similarity a name holding a question's common noun keeps."""
_WORD = re.compile(r"[^\W\d_]+")
_INSIDE_SENTENCE = re.compile(r"[^\W\d_][,;:]?[ \t]+[\"'(]?$")
"""The text before a word inside a sentence ends in a letter (a comma or a colon after
it) and a space; a sentence's first word follows its end mark, a line break or nothing."""
_NAME_SAMPLE = 40
"""Passages read to tell whether the history writes a word as a name."""


_CAPITAL_INSIDE = re.compile(r"(?<=\S)\s+[A-Z][a-zà-ÿ]")
"""A capitalized word after the first word of a text ("I", "I'm", "OK" say nothing: a
phone capitalizes the pronoun, and acronyms are written so by everyone)."""
_WORD_BEFORE = re.compile(r"([^\W\d_]+)[,;:]?[ \t]+[\"'(]?$")
_WORD_AFTER = re.compile(r"[ \t]+([^\W\d_]+)")


def written_in_lower_case(text: str) -> bool:
    """Whether ``text`` capitalizes no word after its first (a phone may capitalize the
    first letter, and the pronoun "I"): how someone who never types capitals writes."""
    return _CAPITAL_INSIDE.search(text) is None


def written_as_name(
    word: str, term: str, index: IndexHead, *, also_lower: bool = False, skip: int = -1
) -> bool:
    """Whether the history writes ``word`` (whose content term is ``term``) as a name:
    with a capital once at least inside a sentence (a capital that opens one says
    nothing), in the first :data:`_NAME_SAMPLE` passages holding it, passage ``skip``
    aside; and always with a capital. With ``also_lower``, a use in lower case counts
    against it only in a text that capitalizes other words (someone who types in lower
    case writes names that way too: "my coworker bastian", while the assistant's replies
    capitalize them), and a capital counts only after a word in lower case and before
    one that is not capitalized (in "some Kombucha Brewing Tips" a heading capitalizes
    common words)."""
    inside = False
    for pid in index.passages_with(term, _NAME_SAMPLE + (skip >= 0)):
        if pid == skip:
            continue
        use = _name_use(word, index.passage_text(pid), also_lower)
        if use < 0:
            return False
        inside = inside or use > 0
    return inside


_NAME_USES_KEPT = 8192
"""Passages whose use of a word :func:`_name_use` remembers."""


def _name_use(word: str, text: str, also_lower: bool) -> int:
    """How ``text`` writes ``word`` (:func:`written_as_name`'s reading of one passage):
    -1, in lower case where that counts against a name; else 1, with a capital inside a
    sentence; else 0. Remembered for texts up to ``MEMO_TEXT_CHARS``: the same question
    words and the best matches' words are read in the same passages turn after turn, and
    a passage's text never changes."""
    if len(text) > MEMO_TEXT_CHARS:
        return _read_name_use(word, text, also_lower)
    return _remembered_name_use(word, text, also_lower)


def _read_name_use(word: str, text: str, also_lower: bool) -> int:
    if text.isascii() and word.isascii() and word.lower() not in text.lower():
        return 0  # (ASCII case folding is plain lower-casing: no match can be there)
    lower_case = None
    use = 0
    for match in _word_pattern(word).finditer(text):
        start = match.start()
        if not match.group()[0].isupper():
            if also_lower:
                if lower_case is None:
                    lower_case = written_in_lower_case(text)
                if lower_case:
                    continue
            return -1
        # A capital that opens a sentence says nothing; one inside a sentence does.
        before = text[max(0, start - 40) : start]
        if _INSIDE_SENTENCE.search(before[-8:]) is None:
            continue
        if also_lower:
            previous = _WORD_BEFORE.search(before)
            following = _WORD_AFTER.match(text, match.end())
            if previous is None or not previous.group(1).islower():
                continue
            if following is not None and following.group(1)[0].isupper():
                continue  # "some Kombucha Brewing Tips": a heading's capitals
        use = 1
    return use


_remembered_name_use = lru_cache(maxsize=_NAME_USES_KEPT)(_read_name_use)


@lru_cache(maxsize=1024)
def _word_pattern(word: str) -> re.Pattern[str]:
    """``word`` as a whole word, in any case."""
    return re.compile(rf"(?<!\w){re.escape(word)}(?!\w)", re.IGNORECASE)


# -- names behind a role ------------------------------------------------------------------

_ASKED_ROLE = re.compile(
    r"\b(my|our|the)\s+([a-z]{3,}(?:-[a-z]+)*)(?:['\u2019]s)?\b", re.IGNORECASE
)
"""A person, animal or place the question calls by its role: "my husband", "our
daughter's", "my sister-in-law", "the electrician"."""
_ROLE_NAME = r"(?:(?:Dr|Mr|Mrs|Ms|Prof)\.?[ \t]+)?([A-Z][a-zà-ÿ]+(?:[- ][A-Z][a-zà-ÿ]+)?)(?![\w:])"
"""A name, after a title ("Dr. Reyes" is Reyes), with its second part ("Ana Lima"); not a
speaker's label ("Melanie:" opens a transcript line). Spaces and tabs only: a line break
ends what sits beside the role."""
_NOT_ROLES = frozenset(
    [
        "one",
        "ones",
        "way",
        "time",
        "times",
        "thing",
        "things",
        "day",
        "days",
        "week",
        "weekend",
        "month",
        "year",
        "morning",
        "evening",
        "night",
        "place",
        "name",
        "end",
        "same",
        "other",
        "last",
        "first",
        "next",
        "best",
        "rest",
        "kind",
        "sort",
        "lot",
        "part",
        "point",
        "moment",
        "idea",
        "plan",
        "question",
        "answer",
        "problem",
        "reason",
    ]
)
"""Words after "the" / "my" that name no one ("the one", "my time", "the plan called ...")."""
_NOT_NAMES = frozenset(
    [
        "today",
        "tomorrow",
        "tonight",
        "yesterday",
        "christmas",
        "easter",
        "thanksgiving",
        "halloween",
        "hanukkah",
        "diwali",
        "ramadan",
        "eid",
    ]
)
"""Capitalized words beside a role that are when, not who ("my mom Monday", "Today - my
dentist"); weekday and month names are left out as well."""
_DETERMINER = re.compile(r"\b(?:the|my|our|his|her|their|your|its)\b", re.IGNORECASE)
_INDEFINITE = re.compile(r"\b(?:a|an|someone|somebody|is|was|be|['\u2019]s)\b", re.IGNORECASE)
_ROLE_PASSAGES = 40
"""Passages holding a role word read for the names given to it (the first ones: a
person is introduced early, and the postings are in order)."""
_ROLES_READ = 4
"""Roles of one question looked up (a pasted text may hold many "my ..."): the first."""
ROLE_NAMES = 3
"""A role given more names than this ("my friend" Priya, Tom, Ana, ...) brings none:
the question does not say which one it means."""
ROLE_WEIGHT = 1.0
"""A role's name weighs as a question word: it is who the question asks about."""


@lru_cache(maxsize=256)
def _role_patterns(role: str, mine: bool) -> tuple[re.Pattern[str], re.Pattern[str] | None]:
    word = re.escape(role)
    # "The electrician is a guy named Luis Ortega", "my boss will be someone called
    # Graham", "a tile setter named Jun Park": a name given in so many words. The words
    # between are checked apart (:func:`_gives_name`).
    named = re.compile(
        rf"(?:\b(?P<article>[Aa]n?)[ \t]+)?\b{word}\b(?P<gap>[^.!?\n]{{0,40}}?)\b"
        rf"(?P<verb>named|called)[ \t]+{_ROLE_NAME}",
    )
    if not mine:
        return named, None
    owner = rf"(?:[Mm]y|[Oo]ur)[ \t]+{word}"
    beside = re.compile(
        # "my husband Javier", "our daughter, Alba", "my physio (Farah"
        rf"\b{owner}(?:[ \t]*[,(])?[ \t]*{_ROLE_NAME}"
        # "Javier, my husband", "Farah (my physio", "Ruairi - my sister-in-law", "Sarah is
        # my manager", "Tom's our landlord"
        rf"|{_ROLE_NAME}[ \t]*(?:,|\(|-|\u2013|\u2014|is\b|['\u2019]s\b)[ \t]*{owner}\b"
    )
    return named, beside


def _gives_name(found: re.Match[str]) -> bool:
    """Whether a "named" / "called" match gives the role its name: no other person or
    thing comes between ("the electrician fixed the dog named Rex"), and "called" is a
    name given ("a physio called Ulla", "someone called Graham", "is called"), not a call
    made ("my sister called Dad yesterday")."""
    gap = found.group("gap")
    if _DETERMINER.search(gap):
        return False
    return (
        found.group("verb") == "named"
        or found.group("article") is not None
        or _INDEFINITE.search(gap) is not None
    )


def _written_in_lower_case(word: str, index: IndexHead) -> bool:
    """Whether the history also writes ``word`` (lower-cased) in lower case (a common
    word: "my boss Bill" and the electricity bill), in the first passages holding it."""
    terms = content_terms(word)
    if not terms:
        return False
    pattern = re.compile(rf"(?<![\w-]){re.escape(word)}(?![\w-])")
    return any(
        pattern.search(index.passage_text(pid))
        for pid in index.passages_with(terms[0], _ROLE_PASSAGES)
    )


def names_by_role(query: str, index: IndexHead) -> dict[str, float]:
    """Names the history gives to a role the question uses -> their weight.

    "What work did my husband find in Toronto?" is answered by "Javier got a job!
    He'll be teaching Spanish...", which says "Javier", not "my husband"; another message
    set the two side by side ("my husband Javier", "Javier, my husband"). A role the
    question writes after "my" or "our" brings the names written right beside it in the
    history, and any role ("the electrician") the names given to it in so many words
    ("the electrician is a guy named Luis Ortega"), read in the first
    :data:`_ROLE_PASSAGES` passages holding the role word; when a role has at most
    :data:`ROLE_NAMES` names that the question does not give already, their words join
    the lexical query like related words. Only what sits right beside the role counts:
    "my sister said Tom..." names no sister.
    """
    asked = {w.lower() for w in _WORD.findall(query)}
    roles: dict[str, bool] = {}
    for match in _ASKED_ROLE.finditer(query):
        role = match.group(2).lower()
        if role not in STOPWORDS and role not in _NOT_ROLES:
            roles[role] = roles.get(role, False) or match.group(1).lower() != "the"
    out: dict[str, float] = {}
    for role, mine in islice(roles.items(), _ROLES_READ):
        terms = content_terms(role)
        if not terms:
            continue
        names: dict[str, list[str]] = {}
        named, beside = _role_patterns(role, mine)
        for pid in index.passages_with(terms[0], _ROLE_PASSAGES):
            text = index.passage_text(pid)
            # Substring checks first: most passages holding the role give it no name.
            found = []
            if "named" in text or "called" in text:
                # The name is the pattern's last group (after article, gap and verb).
                found = [m.group(m.lastindex or 0) for m in named.finditer(text) if _gives_name(m)]
            if beside is not None and ("y " in text or "ur " in text):  # "my ", "Our "...
                found += [m.group(1) or m.group(2) for m in beside.finditer(text)]
            for name in found:
                words = [w.lower() for w in name.split()]
                if any(w in DAYS or w in MONTHS or w in _NOT_NAMES for w in words):
                    continue
                words = [w for w in words if w not in STOPWORDS and len(w) > 1]
                if words and not asked.intersection(words):
                    names[" ".join(words)] = words
        kept = {
            key: words
            for key, words in names.items()
            if not any(_written_in_lower_case(w, index) for w in words)
        }
        if 0 < len(kept) <= ROLE_NAMES:
            for words in kept.values():
                for name in words:
                    out[name] = max(out.get(name, 0.0), ROLE_WEIGHT)
    return out


INITIALISM_WEIGHT = 0.9
"""Weight of an initialism the history writes for a phrase of the question."""
_INITIALISM_PASSAGES = 8
"""Passages holding the letters read for the written capitals ("PT", not "pt")."""
_INITIALISM_RUNS = 24
"""Runs of the question tried, at most (a pasted page asks nothing more)."""


def initialisms(query: str, index: IndexHead) -> dict[str, float]:
    """Initialisms the history writes for two or three words in a row of the question.

    People shorten what they say often: "When did Jonah finish physical therapy?" is
    answered by "Had my last PT session yesterday!", and the static model has no vector
    for "PT" near "physical therapy". Each run of two or three content words of the
    question (the first :data:`_INITIALISM_RUNS`) gives its initials ("pt"); when the
    history writes them in capitals ("PT") in most of the first
    :data:`_INITIALISM_PASSAGES` passages holding them, they join the lexical query at
    :data:`INITIALISM_WEIGHT`. What is not an abbreviation stays out: letters mostly
    written in lower case ("us" beside one "the US"), capitals of a passage in capitals
    ("WE GOT THE CAR"), a run mixing a name and a word ("Tim visiting") and a run
    opening the question (its capital is the sentence's: "Describe Jonah's").
    """
    words = [(m.start(), m.group(0)) for m in _WORD.finditer(query)]
    asked = {w.lower() for _, w in words}
    out: dict[str, float] = {}
    tried = 0
    for size in (2, 3):
        for start in range(len(words) - size + 1):
            run = [w for _, w in words[start : start + size]]
            if any(len(w) < 3 or w.lower() in STOPWORDS for w in run):
                continue
            if len({w[0].isupper() for w in run}) > 1 or not query[: words[start][0]].strip():
                continue  # a name beside a word, or the sentence's own capital
            short = "".join(w[0] for w in run).lower()
            if short in out or short in asked or short in STOPWORDS:
                continue
            tried += 1
            if tried > _INITIALISM_RUNS:
                return out
            if _written_as_initials(short, index):
                out[short] = INITIALISM_WEIGHT
    return out


def _written_as_initials(short: str, index: IndexHead) -> bool:
    """Whether most of the first passages holding ``short`` write it in capitals, in
    text that is not itself in capitals."""
    passages = index.passages_with(short, _INITIALISM_PASSAGES)
    if not passages:
        return False
    upper = short.upper()
    written = re.compile(rf"\b{upper}s?\b")
    capitals = 0
    for pid in passages:
        text = index.passage_text(pid)
        if upper in text and written.search(text) and not _in_capitals(text):
            capitals += 1
    return 2 * capitals > len(passages)


def _in_capitals(text: str) -> bool:
    """Whether ``text`` is written mostly in capital letters ("WE GOT THE CAR!!")."""
    letters = [c for c in text if c.isalpha()]
    return 2 * sum(c.isupper() for c in letters) > len(letters)
