"""Offline running summary: one fact line per message, merged and kept under a budget.

No model is involved. Each summarized message becomes one line (``- User: ...``):
short messages verbatim, longer ones through the offline engine's extractive
summarizer. The lines of the previous summary are kept and the new lines appended.

Under budget nothing is touched: distinct facts that look alike ("Dinner for Ann on
Friday", "Dinner for Tom on Friday") are both facts. Over budget the summary is
re-compressed in this order:

1. identical lines (same text, case and spacing aside) are kept once, the newest;
   a question and the statement it echoes are not identical;
2. long lines are cut down to their key sentence, then every line to a quarter of
   the budget (at least about one sentence), counted with the token counter, so text
   without spaces (CJK, URLs, base64) is cut too: one enormous line cannot evict
   every other fact;
3. the least important lines are dropped until the rest fits.

Importance favours what a long-running assistant must not forget, in any domain:
what the user said about themselves (who they are, what they need, like or cannot
have), requests to remember, decisions, changes to earlier facts and concrete values.
A line that a newer statement repeats almost word for word counts less (it is mostly
covered), a question less than a statement, and ties go to the newer line.

A large batch (a first summary over an imported history, a middleware folding 50
messages at once) is ranked whole: every message is scored on its text by the same
importance, cheaply (no extraction), and only the best-ranked messages, a few
budgets' worth, become fact lines. The user's "I'm allergic to nuts" at the start of a
2,000-message batch is thus weighed against the rest, not left unread.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from langchain_core.messages import BaseMessage

from langgraph_librarian._engine.messages import message_text
from langgraph_librarian._engine.text import CHANGE_CUES, VALUE_PATTERN, WHITESPACE, content_terms
from langgraph_librarian.index._validate import (
    _NUMBER_WORDS,
    _language,
    keeps_fact,
    stated_facts,
    statement_problem,
)
from langgraph_librarian.index._validate import (
    CONSTRAINTS as _CONSTRAINTS,
)
from langgraph_librarian.index.extractive import extractive_summary
from langgraph_librarian.tokens import TokenCounter, count_text_tokens

__all__ = [
    "clip_to_tokens",
    "compress_lines",
    "gist_problem",
    "merge_facts",
    "message_fact",
    "parse_summary",
    "retained_terms",
    "speaker_name",
    "user_fact_terms",
]

_VERBATIM_CHARS = 240
"""Messages up to this length are kept word for word (after whitespace clean-up)."""
_MAX_FACT_CHARS = 320
_SHORT_FACT_WORDS = 30
_LINE_SHARE = 4
"""Over budget, no line may take more than 1/_LINE_SHARE of the budget..."""
_MIN_LINE_CAP = 40
"""...or this many tokens (about one shortened fact), whichever is more."""
_CANDIDATE_FACTOR = 4
"""Fact lines are made for the best-ranked messages of a batch until they are worth this
many budgets: lines ranked below them would be dropped anyway."""
_SCORED_CHARS = 4000
"""A message is ranked on at most this much of its text (one enormous tool output must
not cost more than the rest of the batch)."""
_REDUNDANCY_WINDOW = 200
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_LABELLED = re.compile(r"^(?:User(?: \([^():\n]{1,40}\))?|Assistant|Tool[^:\n]{0,60}):")
_NAMED_USER = re.compile(r"User \([^():\n]{1,40}\)")
_ROLE_LABELS = {"human": "User", "ai": "Assistant", "tool": "Tool"}
_ROLE_WEIGHT = {"User": 2.0, "Assistant": 1.0, "Tool": 0.5}
_PROSE_WEIGHT = 1.5  # lines without a role label, e.g. from a model-written summary
# What a user discloses about themselves and asks to be remembered. Domain-free on
# purpose (no diets or recipes): the same cues matter for travel, code or health.
# Strong cues name something lasting (a constraint, a preference, who they are); weak
# ones only say the user speaks about themselves: "I'm going to make stew tonight" must
# not outrank "I'm allergic to peanuts" for saying "I'm" and "going to".
_LASTING = re.compile(
    r"\b(call me|allerg\w*|intoleran\w*|avoid\w*|prefer\w*|favou?rite|hate[sd]?|"
    r"dislike[sd]?|can'?t|cannot|never|always|remember|forget|important|must|deadline|"
    r"birthday|budget|live[sd]? in|work(?:s|ed)? (?:at|as|for)|i'?m an? |i am an? |"
    r"my name)\b",
    re.IGNORECASE,
)
_PERSONAL = re.compile(
    r"\b(i am|i'm|i have|i've|my|mine|love[sd]?|don'?t|need(?:s|ed)? to)\b",
    re.IGNORECASE,
)
_DECISIONS = re.compile(
    r"\b(decid\w*|agree\w*|confirm\w*|book(?:ed)?|chose|chosen|settled|schedul\w*)\b",
    re.IGNORECASE,
)
_INTENTIONS = re.compile(r"\b(will|going to|plan(?:ned)?)\b", re.IGNORECASE)
# (pattern, weight): changes and values use the offline engine's shared patterns.
_CUES = (
    (_LASTING, 3.0),
    (_PERSONAL, 1.0),
    (CHANGE_CUES, 2.0),
    (_DECISIONS, 1.0),
    (_INTENTIONS, 0.5),
)


@dataclass(frozen=True)
class _Line:
    text: str
    order: int

    @property
    def label(self) -> str | None:
        head, sep, _ = self.text.partition(":")
        if sep and (head in _ROLE_WEIGHT or head.startswith("Tool ")):
            return "Tool" if head.startswith("Tool") else head
        if sep and _NAMED_USER.fullmatch(head):  # "User (Tom)": one of a group chat
            return "User"
        return None

    @property
    def body(self) -> str:
        return self.text.partition(":")[2].strip() if self.label else self.text

    @property
    def is_question(self) -> bool:
        return self.body.rstrip().endswith(("?", "？"))


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: max(0, limit - 1)].rstrip() + "…"


def clip_to_tokens(text: str, max_tokens: int, counter: TokenCounter | None = None) -> str:
    """The start of ``text`` within ``max_tokens`` (``…`` marks the cut).

    Cuts by characters and checks with the token counter, so text without spaces
    (CJK, URLs, base64) is cut as well as prose.
    """
    if count_text_tokens(text, counter) <= max_tokens:
        return text
    limit = min(len(text), max(1, max_tokens * 4))
    clipped = _clip(text, limit)
    while limit > 1 and count_text_tokens(clipped, counter) > max_tokens:
        limit = max(1, int(limit * 0.8))
        clipped = _clip(text, limit)
    return clipped


def speaker_name(message: BaseMessage) -> str:
    """The ``name`` of a user's message (a group chat's "Tom"), fit for a label: one
    line, no colon or brackets, at most 40 characters; ``""`` for none."""
    name = getattr(message, "name", None)
    if message.type != "human" or not isinstance(name, str):
        return ""
    return " ".join(re.sub(r"[():\[\]]", " ", name).split())[:40].strip()


def _label(message: BaseMessage) -> str:
    label = _ROLE_LABELS.get(message.type, message.type.capitalize())
    name = getattr(message, "name", None)
    if message.type == "tool" and name:
        label = f"Tool {name}"
    elif speaker := speaker_name(message):
        label = f"User ({speaker})"
    return label


def message_fact(message: BaseMessage) -> str:
    """One summary line for ``message`` (``""`` for empty and system messages)."""
    if message.type == "system":
        return ""
    text = WHITESPACE.sub(" ", message_text(message)).strip()
    if not text:
        return ""
    label = _label(message)
    if len(text) > _VERBATIM_CHARS:
        role = "human" if message.type == "human" else "ai"
        text = extractive_summary(message_text(message), role, max_sentences=2) or text
        text = WHITESPACE.sub(" ", text).strip()
    return f"{label}: {_clip(text, _MAX_FACT_CHARS)}"


# Lines of a summary that state nothing: a markdown heading ("## SESSION INTENT" of
# LangChain's summary prompt), a tag a model wrapped it in, a placeholder for an empty
# section ("None").
_NOT_A_FACT = re.compile(
    r"#{1,6}(?:\s.*)?|</?[A-Za-z][\w-]{0,40}>|[(\[]?(?:none(?: yet)?|n/?a|nothing|-+|—)[)\]]?\.?",
    re.IGNORECASE,
)


def parse_summary(summary: str) -> list[str]:
    """Fact lines of a previous summary: its bullet lines, or its sentences for prose
    (not its headings, tags or "None" placeholders)."""
    lines: list[str] = []
    for raw in summary.splitlines():
        line = _BULLET.sub("", raw).strip()
        if not line or _NOT_A_FACT.fullmatch(line):
            continue
        if _BULLET.match(raw) or _LABELLED.match(line):
            lines.append(line)
        else:
            lines.extend(s.strip() for s in re.split(r"(?<=[.!?])\s+", line) if s.strip())
    return lines


def _identical_once(lines: list[_Line]) -> list[_Line]:
    """Each line once (the newest copy), comparing text without case or spacing.

    Trailing ``.`` and ``!`` do not count; ``?`` does, so a question never stands
    in for the statement it repeats.
    """
    newest: dict[str, int] = {}
    for line in lines:
        newest[WHITESPACE.sub(" ", line.text).casefold().rstrip(" .!")] = line.order
    keep = set(newest.values())
    return [line for line in lines if line.order in keep]


def _covered(lines: list[_Line]) -> set[int]:
    """Orders of lines whose content words a newer statement repeats (mostly) in full.

    Only the next ``_REDUNDANCY_WINDOW`` lines are compared (bounded cost). Such a line
    is not removed, only ranked lower: it may still carry a detail of its own.
    """
    terms = [frozenset(content_terms(line.text)) for line in lines]
    covered: set[int] = set()
    for i, mine in enumerate(terms):
        if not mine:
            continue
        later = range(i + 1, min(len(lines), i + 1 + _REDUNDANCY_WINDOW))
        if any(
            not lines[j].is_question and len(mine & terms[j]) >= 0.85 * len(mine) for j in later
        ):
            covered.add(lines[i].order)
    return covered


_CONSTRAINT_WEIGHT = 6.0
"""A health or diet constraint (``CONSTRAINTS``: allergic, celiac, vegetarian...) stated
in a user's line or a summary's: above any other lasting fact. Without it a budget line
with a number and a decision outranked "I'm allergic to peanuts", and sixty of them
evicted it; the model's summary is then held to no more than this one keeps."""


def _importance(line: _Line, newest: int, covered: set[int]) -> float:
    label = line.label
    score = _ROLE_WEIGHT.get(label, _PROSE_WEIGHT) if label else _PROSE_WEIGHT
    body = line.body
    score += sum(weight for pattern, weight in _CUES if pattern.search(body))
    if label in (None, "User") and not line.is_question and _CONSTRAINTS.search(body):
        score += _CONSTRAINT_WEIGHT
    score += min(2, len(VALUE_PATTERN.findall(body))) * 0.5
    if line.is_question:
        score -= 0.5  # a question asked is less durable than a fact stated
    if line.order in covered:
        score -= 1.5
    return score + 0.75 * (line.order / max(newest, 1))


def _render(lines: Sequence[_Line]) -> str:
    return "\n".join(f"- {line.text}" for line in lines)


def _shorten(line: _Line, cap: int, counter: TokenCounter | None) -> _Line:
    """The line cut to its key sentence (if long), then to ``cap`` tokens."""
    label = line.label
    head = line.text.partition(":")[0] + ": " if label else ""
    body = line.body
    if len(body.split()) > _SHORT_FACT_WORDS:
        body = extractive_summary(body, "human", max_sentences=1) or body
        words = body.split()
        if len(words) > _SHORT_FACT_WORDS:
            body = " ".join(words[:_SHORT_FACT_WORDS]) + " …"
    room = max(1, cap - count_text_tokens(f"- {head}", counter))
    body = clip_to_tokens(body.strip(), room, counter)
    return _Line(f"{head}{body}", line.order)


def compress_lines(
    lines: Sequence[str], max_tokens: int, counter: TokenCounter | None = None
) -> tuple[str, bool]:
    """Render ``lines`` (oldest first) as a summary of at most ``max_tokens`` tokens.

    Returns the summary and whether anything had to be shortened or dropped.
    """
    items = [_Line(text.strip(), i) for i, text in enumerate(t for t in lines if t.strip())]
    text = _render(items)
    if count_text_tokens(text, counter) <= max_tokens:
        return text, False
    cap = max(_MIN_LINE_CAP, max_tokens // _LINE_SHARE)
    items = [_shorten(line, cap, counter) for line in _identical_once(items)]
    newest = max((line.order for line in items), default=0)
    covered = _covered(items)
    # Drop the least important lines (the oldest among equals) until the rest fits:
    # estimate with per-line counts first, then confirm on the rendered text.
    ranked = sorted(items, key=lambda line: (_importance(line, newest, covered), line.order))
    cost = {line.order: count_text_tokens(f"- {line.text}", counter) + 1 for line in items}
    total = sum(cost.values())
    dropped: set[int] = set()
    for line in ranked:
        if total <= max_tokens:
            break
        dropped.add(line.order)
        total -= cost[line.order]
    kept = [line for line in items if line.order not in dropped]
    text = _render(kept)
    for line in ranked:
        if count_text_tokens(text, counter) <= max_tokens or not kept:
            break
        if line.order not in dropped:
            dropped.add(line.order)
            kept = [k for k in kept if k.order != line.order]
            text = _render(kept)
    if not kept and items:
        # Not even one capped line fits (a tiny budget): keep the start of the best one.
        best = max(items, key=lambda line: _importance(line, newest, covered))
        text = clip_to_tokens(f"- {best.text}", max_tokens, counter)
    return text, True


def _ranked_messages(messages: Sequence[BaseMessage]) -> list[tuple[float, int]]:
    """``(-importance, -index)`` of each message with text, as a heap: best first.

    Scored as its fact line would be, on its text (no extraction, which only keeps
    sentences of it: a message's line never holds a cue its text lacks; at most
    ``_SCORED_CHARS`` of it), with the newer message first among equals.
    """
    newest = max(len(messages) - 1, 1)
    heap: list[tuple[float, int]] = []
    for index, message in enumerate(messages):
        if message.type == "system":
            continue
        text = WHITESPACE.sub(" ", message_text(message)[:_SCORED_CHARS]).strip()
        if text:
            line = _Line(f"{_label(message)}: {text}", index)
            heap.append((-_importance(line, newest, set()), -index))
    heapq.heapify(heap)
    return heap


def merge_facts(
    previous_summary: str,
    messages: Sequence[BaseMessage],
    max_tokens: int,
    counter: TokenCounter | None = None,
) -> tuple[str, bool]:
    """Previous summary plus one line per message, re-compressed to ``max_tokens``.

    Every message of the batch is a candidate. Fact lines are made best-ranked first
    (importance, then the newer message) until they are worth a few budgets; the rest
    rank lower than lines that already fill the budget several times, so they would be
    dropped anyway. The work beyond one cheap scoring pass over the batch is what the
    budget can hold (a first summary over a 20,000-message backlog included).
    """
    heap = _ranked_messages(messages)
    facts: dict[int, str] = {}
    worth = 0
    while heap and worth <= _CANDIDATE_FACTOR * max_tokens:
        index = -heapq.heappop(heap)[1]
        fact = message_fact(messages[index])
        if fact:
            facts[index] = fact
            worth += count_text_tokens(fact, counter)
    lines = [*parse_summary(previous_summary), *(facts[i] for i in sorted(facts))]
    return compress_lines(lines, max_tokens, counter)


def retained_terms(previous_summary: str) -> set[str]:
    """The content words a new summary must mostly keep from ``previous_summary``.

    A summary written by a model: all of them but its headings and placeholders
    (:func:`parse_summary`: "## SESSION INTENT", "None"). One made offline (a line per
    message, ``User: ...``) also holds small talk the model is told to drop, so only its
    lasting lines count (constraints, preferences, identity, decisions, changes,
    values): otherwise a good model answer is rejected for dropping the pleasantries,
    and every later fold falls back to the offline summary.
    """
    lines = parse_summary(previous_summary)
    labelled = [line for line in lines if _LABELLED.match(line)]
    if not lines or 2 * len(labelled) < len(lines):
        return set(content_terms("\n".join(lines)))
    lasting = [
        line
        for line in lines
        if _LASTING.search(line)
        or CHANGE_CUES.search(line)
        or _DECISIONS.search(line)
        or VALUE_PATTERN.search(line.partition(":")[2])
    ]
    return set(content_terms(" ".join(lasting)))


def user_fact_terms(messages: Sequence[BaseMessage]) -> set[str]:
    """Content words of the user's messages that state a lasting fact: a number, or a
    constraint, preference, decision or change cue ("My flight is TP 1341 on Friday",
    "I'm allergic to nuts"). Small talk and questions without one are left out."""
    stated = [
        text
        for text in (message_text(m) for m in messages if m.type == "human")
        if _fact_weight(text) >= _STATES_A_FACT
    ]
    return set(content_terms(" ".join(stated)))


_STATES_A_FACT = 2.0
"""The weight of cues and values (as lines are ranked) a user message needs to count as
stating a lasting fact: "My flight is TP 1341 on Friday" (a personal word, two values),
"I'm allergic to nuts"; not "took me 2 tries to log in" (one number)."""


# The same two kinds of cue in the other languages users most often write in (closed
# classes: first-person words; the adverbs of a change), for a user who states a fact in
# German, French or Spanish ("Wir haben eine gefunden: ..., 870 Euro",
# "Je vise maintenant le semi-marathon de novembre").
_PERSONAL_ELSEWHERE = re.compile(
    r"\b(?:ich|mein|meine|meinen|meinem|meiner|wir|unser|unsere|unseren|je|j'|mon|ma|mes"
    r"|nous|notre|nos|yo|mis|nosotros|nosotras|nuestro|nuestra|nuestros|nuestras)\b",
    re.IGNORECASE,
)
_CHANGE_ELSEWHERE = re.compile(
    r"\b(?:jetzt|nun|stattdessen|statt|nicht mehr|maintenant|d[ée]sormais|plut[ôo]t"
    r"|au lieu|ne plus|ahora|en vez|en lugar|ya no)\b",
    re.IGNORECASE,
)
_CUES_ELSEWHERE = (
    (_PERSONAL, _PERSONAL_ELSEWHERE, 1.0),
    (CHANGE_CUES, _CHANGE_ELSEWHERE, 2.0),
)


def _fact_weight(text: str) -> float:
    weight = sum(w for pattern, w in _CUES if pattern.search(text))
    # A kind of cue counts once, whichever language it is said in.
    weight += sum(
        w
        for english, elsewhere, w in _CUES_ELSEWHERE
        if elsewhere.search(text) and not english.search(text)
    )
    return weight + min(2, len(VALUE_PATTERN.findall(text))) * 0.5


# -- is a model's running summary true to what it folds? ---------------------------------

_FIRST_PERSON = re.compile(
    r"\b(?:i|i'm|i’m|i've|i’ve|i'd|i’d|i'll|i’ll|me|my|mine|myself|we|we're|our|ours|us)\b",
    re.IGNORECASE,
)
_VOCATIVE = re.compile(
    r"\b(?:hi|hello|hey|dear|thanks|thank you|hallo|bonjour|salut|hola|ciao)[ ,]+([A-Z]\w+)",
    re.IGNORECASE,
)
_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n+")
# How a writer introduces themselves in the other languages users most often write in
# (closed classes): the capitalised words right after one are the writer's name. Only
# personal names: a place may be translated ("London" for "Londres", "Munich" for
# "München"), a name is not. A cue that only names ("ich heiße", "je m'appelle", "me
# llamo", "mi chiamo", "chamo-me", "ik heet") takes one capitalised word; one that also
# says what or where one is ("ich bin", "je suis", "soy", "sono", "sou", "ik ben": "Ik ben
# Nederlander", "Je suis Suisse", "Soy Madrileña", "sono Marco e Rita" of one's parents)
# takes two in a row ("Ich bin Sam Becker", "Soy Ana Ruiz"). "heiße" is a name only after
# "ich" ("heiße Milch" is hot milk; "Ich heiße Sie willkommen" welcomes someone).
_INTRODUCES = re.compile(
    r"\b(?:ich[ \t]+hei(?:ß|ss)e|nenne mich|name ist|m['’]appelle|nom est|me llamo"
    r"|nombre es|mi chiamo|nome [èe]|me chamo|chamo-me|nome [ée]|ik heet"
    r"|naam is)[ \t]+((?:[^\W\d_][\w'’-]*[ \t]*){1,3})",
    re.IGNORECASE,
)
_INTRODUCES_TWO = re.compile(
    r"\b(?:ich[ \t]+bin|je suis|soy|sono|sou|ik ben)[ \t]+((?:[^\W\d_][\w'’-]*[ \t]*){2,3})",
    re.IGNORECASE,
)
_NOT_NAMES = frozenset(["Sie", "Ihnen", "Dich", "Euch", "Vous", "Usted", "Lei"])
"""Pronouns of address that a cue may precede ("Ich heiße Sie willkommen")."""


def _introduced(sentence: str) -> set[str]:
    """The name a sentence in another language than English introduces the writer by (a
    cue of ``_INTRODUCES``): the run of capitalised words right after the cue ("Ich
    heiße *Sam Becker* und wohne in Hamburg", "Je m'appelle *Claire Dubois*")."""
    names: set[str] = set()
    for pattern, least in ((_INTRODUCES, 1), (_INTRODUCES_TWO, 2)):
        for match in pattern.finditer(sentence):
            run = []
            for word in match.group(1).split():
                word = word.strip("'’-")
                if not word or not word[0].isupper() or word in _NOT_NAMES:
                    break
                run.append(re.sub(r"['’]s$", "", word))
            if len(run) >= least:
                names.update(run)
    return names


def _about_themselves(messages: Sequence[BaseMessage]) -> list[tuple[str, str | None]]:
    """The statements (not questions) of the user's messages in the first person that
    state a lasting fact (as :func:`user_fact_terms` weighs them, or a health or diet
    constraint), in any of the languages the cues cover ("I'm allergic to peanuts"),
    each with the language of its message (``None`` when it cannot be told)."""
    found = []
    for message in messages:
        if message.type != "human":
            continue
        text = message_text(message)
        language = _language(text)
        for sentence in _SENTENCES.split(text):
            sentence = sentence.strip()
            if not sentence or sentence.endswith(("?", "？")):
                continue
            # A writer who gives their name in another language ("Mi chiamo Giulia").
            introduces = language != "en" and bool(_introduced(sentence))
            personal = (
                _FIRST_PERSON.search(sentence) or _PERSONAL_ELSEWHERE.search(sentence) or introduces
            )
            # A lasting fact ("I live in Porto", "my budget is 50 dollars"), not small
            # talk with a number ("took me 2 tries to log in") or a passing like.
            lasting = (
                _fact_weight(sentence) >= _STATES_A_FACT
                or _CONSTRAINTS.search(sentence)
                or introduces
            )
            if personal and lasting:
                found.append((sentence, language))
    return found


def _starts(text: str) -> set[str]:
    return {w[:5] for w in re.findall(r"[^\W\d_]+", text.lower())}


def _is_number_fact(shown: str) -> bool:
    return any(c.isdigit() for c in shown) or shown.lower() in _NUMBER_WORDS


def dropped_user_facts(
    summary: str, messages: Sequence[BaseMessage], offline: str | None = None
) -> list[str]:
    """What the user said about themselves in ``messages`` that ``summary`` loses
    entirely: a number, a name, or a health or diet constraint ("allergic") of a
    first-person statement (of a message in another language than English summarised in
    another language, no name but the writer's own, given by a cue such as "ich heiße",
    "je m'appelle": its other capitalised words are nouns or places that may be
    translated as often). With
    ``offline`` (the summary the fold falls back to), only what that one keeps: over a
    tight budget the offline summary drops facts too, and a model's summary is not
    rejected for losing no more than it."""
    lost: list[str] = []
    said = _starts(summary)
    fallback = _starts(offline) if offline is not None else None
    in_summary = _language(summary)
    for sentence, language in _about_themselves(messages):
        # Of a message in another language than English summarised in another language
        # (German nouns are capitalised: "Reise", "Nüsse"; "Munich" for "München",
        # "London" for "Londres"), only numbers, dates and the writer's own name ("Ich
        # heiße Sam Becker", "me llamo Ana Ruiz") must stay, not places or nouns.
        # (A sentence too short to tell its language by, that introduces the writer
        # with a cue of another language, is of that other language: "Je suis Marie,
        # j'habite à Bruxelles".)
        introduced = _introduced(sentence) if language != "en" else set()
        foreign = (language not in (None, "en") and in_summary != language) or (
            language is None and bool(introduced) and in_summary in (None, "en")
        )
        # The one addressed ("Hi Aria, I'm Sam") is no fact about the user.
        addressed = {m.group(1) for m in _VOCATIVE.finditer(sentence)}
        for fact in stated_facts(sentence):
            if fact[0] in addressed or fact[0] in lost:
                continue
            if foreign and not _is_number_fact(fact[0]) and fact[0] not in introduced:
                continue
            if offline is not None and not keeps_fact(offline, fact):
                continue
            if not keeps_fact(summary, fact):
                lost.append(fact[0])
        for match in _CONSTRAINTS.finditer(sentence):
            word = match.group(0)
            start = word.lower()[:5]
            if fallback is not None and start not in fallback:
                continue
            if start not in said and word not in lost:
                lost.append(word)
    return lost


_GIST_LENGTH_FACTOR = 4
_GIST_LENGTH_SLACK = 8000
"""A running summary over four times the text it folds, plus 8,000 characters, is no
summary but a bloated answer: rejected before it is judged (as the indexer rejects one
over four times what an entry keeps). Judging costs time in the product of the two
lengths (each statement's clauses against the source's): 66 s for a 225 KB answer to a
34 KB fold. The slack lets a short fold's long answer through: an answer over the budget
is not wrong, the summarizer has the model shorten it, and judging a few thousand
characters against a short fold takes milliseconds."""
_GIST_MOST_STATEMENTS = 200
"""A running summary of more statements than this is rejected before it is judged: no
summary but a copy (the budget keeps far fewer lines), and judging only the first ones
would pass the rest unjudged (a wrong statement at line 251 accepted). Judging them all
costs time in the product of their number and the fold's length."""


def gist_problem(
    summary: str,
    messages: Sequence[BaseMessage],
    previous: str = "",
    offline: Callable[[], str] | None = None,
) -> str | None:
    """Why a model's running summary of ``messages`` (folded into ``previous``) must not
    replace them, or ``None``.

    Each statement (line, or sentence of prose) must be supported by the messages or the
    previous summary: no number, name or amount tied to something else, no claim said
    the other way ("User is not allergic to peanuts" for "I'm allergic to peanuts"; see
    :func:`~langgraph_librarian.index._validate.statement_problem`). And what the user
    stated about themselves must not vanish: every number, name and health or diet
    constraint of their first-person statements stays in the summary (a model that
    drops "allergic", or writes "loves peanuts", loses it), when the summary the fold
    would fall back to (``offline()``) keeps it.
    """
    source = "\n".join(
        [previous, *(message_text(m) for m in messages if m.type != "system")]
    ).strip()
    if len(summary) > _GIST_LENGTH_FACTOR * len(source) + _GIST_LENGTH_SLACK:
        return (
            f"the summary is {len(summary):,} characters, over {_GIST_LENGTH_FACTOR} times "
            "what it folds"
        )
    statements = parse_summary(summary)
    if len(statements) > _GIST_MOST_STATEMENTS:
        return (
            f"the summary has {len(statements):,} statements, over the "
            f"{_GIST_MOST_STATEMENTS} a running summary keeps"
        )
    for statement in statements:
        problem = statement_problem(statement, source)
        if problem is not None:
            return f"{problem}: {statement[:80]!r}"
    lost = dropped_user_facts(summary, messages)
    if lost and offline is not None:
        lost = dropped_user_facts(summary, messages, offline())
    if lost:
        return f"the summary drops what the user said about themselves ({', '.join(lost[:3])})"
    return None
