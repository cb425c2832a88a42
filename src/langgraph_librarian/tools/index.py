"""ToolIndex: hybrid (embedding + lexical) search over a tool catalog.

A search never dead-ends while a plausible tool exists: it answers with confident
matches, or with low-confidence candidates, or with a domain, or with the domain list.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import logging
import math
import os
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langchain_core.utils.pydantic import is_basemodel_subclass
from typing_extensions import is_typeddict

from langgraph_librarian._engine.crosslingual import (
    function_words,
    translate_inflected,
    translate_words,
)
from langgraph_librarian._engine.failures import (
    cause_key,
    classify,
    describe,
    embedding_answered,
    embedding_failed,
    embedding_failures,
    status_code,
)
from langgraph_librarian._engine.static import STATIC_MODEL_ID, english_words, whole_words
from langgraph_librarian._engine.text import STOPWORDS, stem_terms, tokenize
from langgraph_librarian.embeddings import (
    default_embeddings,
    embedding_model_id,
    load_embeddings,
)
from langgraph_librarian.tools._lexical import LexicalScorer, fold_accents
from langgraph_librarian.tools._persist import read_tool_vectors, write_tool_vectors
from langgraph_librarian.tools.calibration import SearchCalibration, calibration_for

__all__ = ["ToolIndex", "ToolSearchResult"]

logger = logging.getLogger("langgraph_librarian.tools")

_REJECT_STRIKES = 2
"""Syncs in which a tool's text must fail on its own, while the model embeds other texts,
before the tool is taken as rejected (one failure may be a server's hiccup)."""
_REJECT_WAIT = 600.0
"""Seconds before a rejected tool is asked again; doubled at each rejection after that,
up to :data:`_REJECT_WAIT_MAX` (a model or a limit may change: a tool rejected for good
costs one call now and then)."""
_REJECT_WAIT_MAX = 86_400.0

_clock = time.monotonic


def _tells_of_a_text(exc: BaseException) -> bool:
    """Whether a failed batch may say that the model rejects a text of it: a permanent
    failure (kind ``"failure"``), but not a server error (HTTP 5xx). The failure policy
    does not retry a 500 (a local server's "never works"), but for a batch it says
    nothing of one text: a flaky server answers the same texts a moment later."""
    status = status_code(exc)
    return classify(exc) == "failure" and (status is None or status < 500)


def _unit_rows(raw: Any, count: int, width: int | None = None) -> np.ndarray:
    """The embedding model's answer for ``count`` texts as unit float32 rows.

    Raises:
        ValueError: not ``count`` vectors of one width (``width`` when given), or
            numbers that are not finite: a failure of the model (a NaN vector made its
            tool's score NaN; a vector too many misaligned tools and rows).
    """
    try:
        array = np.asarray(raw, dtype=np.float32)
    except (TypeError, ValueError):
        raise ValueError(f"the embedding model returned no {count} vectors of one width") from None
    if array.ndim != 2 or array.shape[0] != count or array.shape[1] == 0:
        raise ValueError(
            f"the embedding model returned vectors of shape {array.shape} for {count} texts"
        )
    if width is not None and array.shape[1] != width:
        raise ValueError(
            f"the embedding model returned vectors of {array.shape[1]} numbers, "
            f"the tools' have {width}"
        )
    if not np.isfinite(array).all():
        raise ValueError("the embedding model returned numbers that are not finite (NaN)")
    unit: np.ndarray = array / np.maximum(np.linalg.norm(array, axis=1, keepdims=True), 1e-9)
    return unit


@dataclass
class _Apart:
    """A tool whose text failed on its own while the model embedded other texts."""

    error: str  # "Type: message" of its last failure
    strikes: int  # syncs in which it failed so (rejected from _REJECT_STRIKES on)
    due: float  # when it is asked again (_clock)


_LEXICAL_CALIBRATION = calibration_for(None)
"""Thresholds of a search whose embedding model failed (its scores are lexical)."""

ToolLike = BaseTool | Callable[..., Any] | dict[str, Any]
MatchReason = Literal["match", "sibling", "name", "domain", "candidate"]
Fallback = Literal["name", "candidates", "domain", "domains"]
_DOMAIN_SPLIT = re.compile(r"[_.\-:/]")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NAME_TOKEN = re.compile(r"[\w.\-:/]+")
_SIBLING_POOL = 200
"""Top-ranked tools in which domain siblings are looked for first."""
_ENGLISH_ONLY_MODELS = (STATIC_MODEL_ID, "all-MiniLM-L6-v2")
"""Ids (prefixes) of the packaged models that know English only: the cross-lingual table
is on for them by default."""
_MIN_TRANSLATED = 4
"""Shorter words are not translated: three letters are far more often an English
abbreviation ("dns", "sla", "url") than a foreign word worth reading."""
_SAME_VECTOR = 0.99
"""Cosine from which a saved vector and a fresh one of the same text count as the same
model's (remote models are not bit-for-bit deterministic)."""
_TRANSLATION_WEIGHT = 0.8
"""How much an English word of the cross-lingual table counts for the word it reads."""


def _model_words() -> frozenset[str]:
    """Whole words of the packaged models' WordPiece vocabulary (static and MiniLM
    share it): the words an English-only model reads as words, not as pieces."""
    return whole_words()


ARGUMENT_WEIGHT = 0.5
"""How much a word of an argument's name or description counts in the lexical score,
against 1 for a word of the description and 3 for one of the name."""

_REQUEST_WORDS = frozenset(
    {
        "also",
        "and",
        "call",
        "give",
        "load",
        "need",
        "please",
        "plus",
        "then",
        "tool",
        "tools",
        "use",
        "want",
        "with",
    }
)
"""Words that only ask for the tools a request names ("load email_send please"): a
request that names tools and has no other word is not searched further."""

VERB_WEIGHT = 0.5
"""How much a request's word that is a common verb of tool names ("write", "get",
"send") counts in the lexical coverage, against 1 for its other words: the action is
shared by many tools, its object says which one. "write me a poem" matched only by the
name ``file_write`` no longer reads as a confident file request."""

MAX_DOMAINS_LISTED = 40
"""Domains a "no match" answer lists at most (the candidates' domains first)."""

MAX_QUERY_CHARS = 2_048
"""Characters of a query that are read (searched, embedded, checked for tool names); the
rest is ignored. Each distinct word the catalog does not know costs a look-alike lookup
and a product over the catalog's words: a 20,000-word pasted document took 94 s on a
50,000-tool catalog (a capability stated in plain English is a sentence or two)."""


def _clip(query: Any) -> Any:
    """``query`` up to :data:`MAX_QUERY_CHARS` (anything else as it is)."""
    return query[:MAX_QUERY_CHARS] if isinstance(query, str) else query


_VERBS = frozenset(
    {
        "get",
        "set",
        "list",
        "create",
        "update",
        "delete",
        "remove",
        "add",
        "fetch",
        "search",
        "find",
        "send",
        "read",
        "write",
        "run",
        "check",
        "make",
        "do",
        "query",
        "lookup",
        "compute",
        "calculate",
        "convert",
        "generate",
        "show",
        "view",
        "upload",
        "download",
        "edit",
        "save",
        "cancel",
        "retrieve",
        "modify",
        "start",
        "stop",
        "enable",
        "disable",
        "submit",
        "describe",
        "count",
        "validate",
        "verify",
        "translate",
        "summarize",
        "schedule",
        "reschedule",
        "assign",
        "archive",
        "restore",
        "rename",
        "move",
        "copy",
        "share",
        "invite",
        "reply",
        "forward",
        "resolve",
        "close",
        "reopen",
        "refresh",
        "sync",
        "import",
        "export",
    }
)
"""First words of verb-first names ("get_weather", "send_email"): the object is the
domain. Words that are as often nouns in tool names ("book", "post", "order", "call",
"file", "mail", "play", "open") are left out: "book_search" stays in "book"."""
_FILLERS = frozenset(
    {
        "current",
        "all",
        "new",
        "latest",
        "recent",
        "my",
        "the",
        "a",
        "an",
        "one",
        "many",
        "by",
        "to",
        "from",
        "for",
        "of",
        "open",
        "closed",
        "active",
        "pending",
        "available",
    }
)
_PARTICLES = frozenset(
    {"in", "out", "up", "off", "on", "down", "back", "over", "away", "through", "into"}
)
"""Particles of phrasal verbs: ``check_in_guest``, ``sign_up_user``, ``log_out_session``."""
_FILLERS |= _PARTICLES
"""Words skipped after a verb before its object (``get_current_weather`` -> ``weather``,
``check_in_guest`` -> ``guest``)."""
_DETERMINERS = frozenset(
    {
        "a",
        "an",
        "the",
        "this",
        "that",
        "these",
        "those",
        "my",
        "your",
        "our",
        "his",
        "her",
        "its",
        "their",
        "each",
        "every",
        "all",
        "any",
        "some",
        "one",
        "another",
    }
)
"""Words that follow a verb, never a noun's compound: a description starting "Track a
parcel" uses "track" as a verb ("Weather forecast for..." uses "weather" as a noun)."""


_KEEP_PLURAL = frozenset({"series", "species", "news", "status", "bus", "gas", "canvas", "alias"})


def _singular(word: str) -> str:
    """The object of a verb-first name in the singular, so ``list_issues`` and
    ``create_issue`` share a domain: ``issues`` -> ``issue``, ``policies`` -> ``policy``,
    ``boxes`` -> ``box``, ``matches`` -> ``match``, ``classes`` -> ``class`` (``status``,
    ``access``, ``analytics`` and the like are kept)."""
    if len(word) <= 3 or word in _KEEP_PLURAL or word.endswith(("ss", "us", "is", "ics")):
        return word
    if word.endswith("ies") and len(word) > 4:
        # movies, cookies, zombies: -ie words; policies, categories, queries: -y words
        return word[:-1] if word[-4] in "vkbl" else word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes", "zes")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


_NO_DOMAIN = "general"
"""The domain inferred for a name that implies none (one word: ``search``, ``calculator``):
its tools share no more than that, so they do not travel together as siblings."""


def _name_parts(name: str) -> list[str]:
    return [p.lower() for p in _DOMAIN_SPLIT.split(_CAMEL.sub("_", name.strip())) if p]


def infer_domain(name: str, *, verb_first: bool = False) -> str:
    """The domain a name implies: ``email_send`` -> ``email``, ``github.list`` -> ``github``,
    and for verb-first names the object: ``get_weather`` -> ``weather``,
    ``list_issues`` -> ``issue`` (singular, filler words and particles skipped:
    ``get_current_weather`` -> ``weather``, ``check_in_guest`` -> ``guest``).

    A name is verb-first when its first word is a common verb of tool names
    (``_VERBS``) or when ``verb_first`` says so (:class:`ToolIndex` judges that from the
    catalog: see :meth:`ToolIndex.add`).
    """
    parts = _name_parts(name)
    if len(parts) < 2:
        return _NO_DOMAIN
    if verb_first or parts[0] in _VERBS:
        rest = [p for p in parts[1:] if p not in _FILLERS]
        return _singular(rest[0]) if rest else _NO_DOMAIN
    return parts[0]  # a name's own head ("kubernetes", "sales") is kept as it is


def _head(record: ToolRecord) -> str | None:
    """The first word of a name whose domain may be judged from the catalog: the domain
    was inferred, the name has two words or more and does not start with a known verb."""
    if not record.domain_inferred:
        return None
    parts = _name_parts(record.name)
    if len(parts) < 2 or parts[0] in _VERBS:
        return None
    return parts[0]


def _is_verb(votes: list[int]) -> bool:
    """At least half of the described names starting with a word use it as a verb."""
    return votes[0] > 0 and 2 * votes[0] >= votes[1]


def _used_as_verb(record: ToolRecord, head: str) -> bool | None:
    """Whether the description starts with ``head`` used as a verb ("Track a parcel",
    "Check in the guest": the word, particles, then a determiner); ``None`` for a tool
    without a description (no evidence). A name whose second word is a known verb
    (``email_send``) reads its first word as a noun whatever the description says."""
    parts = _name_parts(record.name)
    if parts[1] in _VERBS:
        return False
    words = tokenize((record.description or "").lower())[:6]
    if not words:
        return None
    if stem_terms(words[:1]) != stem_terms([head]):
        return False
    rest = [w for w in words[1:] if w not in _PARTICLES]
    return bool(rest) and rest[0] in _DETERMINERS


def _english_words(word: str) -> tuple[tuple[str, ...], bool]:
    """English words the cross-lingual table gives ``word`` (accent-folded): for the
    word itself, or, when the model does not read it as a word of its own, for the
    dictionary form it inflects ("envoie" -> "envoyer": the table holds a word's
    frequent forms, not every conjugation or plural); and whether the table lists the
    word itself. A word of the model's vocabulary ("cases", "books") is English or a
    name ("marie"), and a frequent English word ("retirees", "hoses") English: neither
    is read as an inflection ("retirer", "Hose")."""
    own = translate_words(word)
    if word in english_words():  # the vocabulary's words and the frequent English ones
        return own, True
    return translate_inflected(word), bool(own)


def _reads_foreign(table_words: int, unread: int, words: list[str], content: list[str]) -> bool:
    """Whether a text reads as foreign (see :meth:`ToolIndex.translated`): two table
    words or more, table words and words nothing reads making up more than half of its
    content words, or function words of another language at least as many as English ones."""
    markers = function_words()
    return (
        table_words >= 2
        or 2 * (table_words + unread) > len(content)
        or 0 < sum(word in markers for word in content) >= len(words) - len(content)
    )


@functools.lru_cache(maxsize=65536)
def _english_of(description: str) -> tuple[str, ...]:
    """English words for a tool description written in another language ("Einen Termin
    im Kalender erstellen" -> calendar, schedule), by the cross-lingual table. A
    description is judged by its function words alone (some of another language, at
    least as many as English ones): a short English one full of brand names ("Create a
    Spotify playlist") must not read as foreign."""
    words = tokenize(fold_accents(description))
    content = [w for w in words if w not in STOPWORDS]
    markers = function_words()
    if not 0 < sum(word in markers for word in content) >= len(words) - len(content):
        return ()
    english = (
        _english_words(word)[0]
        for word in content
        if word not in markers and len(word) >= _MIN_TRANSLATED
    )
    return tuple(dict.fromkeys(w for words_ in english for w in words_))


def _squeeze(name: str) -> str:
    """A domain name lower-cased without spaces or punctuation (``"Print 3D"`` -> ``print3d``)."""
    return "".join(c for c in name.lower() if c.isalnum())


def _readable(name: str) -> str:
    return _CAMEL.sub(" ", name).replace("_", " ").replace(".", " ")


def _warn_shadowed(old: ToolRecord, new: ToolRecord) -> None:
    """Say that one catalog holds two tools of one name (tools gathered from several
    MCP servers, say): the later replaces the earlier, and a request for the earlier
    one would silently load the other. Adding a tool again across calls (a refreshed
    catalog) replaces it quietly."""
    if old.description == new.description and old.arguments == new.arguments:
        return
    logger.warning(
        "tool librarian: two tools named %r in one catalog; the later one (%r, arguments "
        "%s) replaces the earlier (%r, arguments %s). Give them distinct names (prefix "
        "each server's tools).",
        new.name,
        new.description[:80],
        list(new.arguments),
        old.description[:80],
        list(old.arguments),
    )


@dataclass
class ToolRecord:
    """A catalog entry.

    Attributes:
        name: Unique tool name.
        description: What the tool does ("" when the tool has none).
        domain: Group of related tools (siblings travel together).
        arguments: Argument names, part of the embedded text.
        tool: The executable tool, when the entry came from a tool or function.
        schema: The JSON schema, when the entry came from a schema dict.
        argument_descriptions: One description per argument ("" when it has none);
            read by the lexical half of the search.
        domain_inferred: ``True`` when ``domain`` was read from the name (no domain
            given): the index may then judge the name's first word a verb from the
            catalog (see :meth:`ToolIndex.add`).
    """

    name: str
    description: str
    domain: str
    arguments: list[str] = field(default_factory=list)
    tool: BaseTool | None = None
    schema: dict[str, Any] | None = None
    argument_descriptions: list[str] = field(default_factory=list)
    domain_inferred: bool = False

    @property
    def text(self) -> str:
        """What is embedded: ``name: description (arguments: a, b)``."""
        readable = _readable(self.name)
        args = f" (arguments: {', '.join(self.arguments)})" if self.arguments else ""
        return f"{readable}: {self.description or readable}{args}"

    @property
    def search_text(self) -> str:
        """Everything the lexical search reads: the embedded text plus argument
        descriptions (it weighs them field by field: see :meth:`lexical_fields`)."""
        described = [d for d in self.argument_descriptions if d]
        return self.text + (" " + " ".join(described) if described else "")

    def lexical_fields(self) -> list[tuple[str, float]]:
        """The texts the lexical search reads, each with its weight: the name three
        times (the most specific thing a tool says about itself), the description once
        (the name stands in for a missing one), argument names and argument
        descriptions ``ARGUMENT_WEIGHT`` times each. Arguments say what a tool needs,
        not what it does: at full weight an argument named ``time`` made "what's 17
        times 23" a confident alarm tool."""
        readable = _readable(self.name)
        fields = [(readable, 3.0), (self.description or readable, 1.0)]
        if self.arguments:
            fields.append((" ".join(_readable(a) for a in self.arguments), ARGUMENT_WEIGHT))
        described = [d for d in self.argument_descriptions if d]
        if described:
            fields.append((" ".join(described), ARGUMENT_WEIGHT))
        return fields

    @property
    def summary(self) -> str:
        """One line for the agent."""
        lines = (self.description or "").strip().splitlines()
        first = lines[0].strip() if lines else "no description"
        return first if len(first) <= 160 else first[:157] + "..."


@dataclass
class ToolMatch:
    """A tool returned by a search and why (``"candidate"``: a low-confidence guess)."""

    name: str
    score: float
    reason: MatchReason
    domain: str


@dataclass
class ToolSearchResult:
    """Outcome of :meth:`ToolIndex.search`.

    Attributes:
        matches: Tools to load, best first.
        fallback: ``None`` for a confident match; ``"name"`` (tools named exactly in the
            query), ``"candidates"`` (no confident match: the best guesses), ``"domain"``
            (the tools of a domain named in the query or passed) or ``"domains"``
            (nothing loaded; ``domains`` lists what exists).
        domains: Domain names with tool counts, for the agent to refine its query
            (with ``"candidates"`` and ``"domains"``; at most 40, candidates' first).
        low_confidence: ``True`` when ``matches`` are guesses (``"candidates"``).
        domain_requested: The ``domain=`` passed, when it names no known domain (case
            aside); ``None`` otherwise.
        domain_used: With ``domain_requested``: the known domain the search kept
            instead (the closest one), or ``None`` when the filter was ignored.
        rest: With ``"name"``: the answer for the rest of the request (its words that
            are not tool names, when it has any), whose matches follow the named tools
            in ``matches``; ``None`` otherwise.
        rest_query: The text searched for ``rest`` ("" without one).
        embedding_error: The embedding model's failure (``"Type: message"``) when the
            search was lexical because of it (scored and judged as by the lexical engine,
            ``embeddings=None``); ``None`` otherwise.
        embedding_rejected: The index's tools whose text the embedding model rejects
            (name -> ``"Type: message"``): they have no vector and are scored by their
            words alone (the cosine half is zero); the other tools are searched as usual.
    """

    matches: list[ToolMatch] = field(default_factory=list)
    fallback: Fallback | None = None
    domains: dict[str, int] = field(default_factory=dict)
    low_confidence: bool = False
    domain_requested: str | None = None
    domain_used: str | None = None
    rest: ToolSearchResult | None = None
    rest_query: str = ""
    embedding_error: str | None = None
    embedding_rejected: dict[str, str] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return [m.name for m in self.matches]


def _argument_descriptions(properties: Any, names: list[str]) -> list[str]:
    out = []
    for name in names:
        spec = properties.get(name) if isinstance(properties, dict) else None
        text = spec.get("description") if isinstance(spec, dict) else None
        out.append(str(text) if text else "")
    return out


def _record(item: ToolLike, domain: str | None) -> ToolRecord:
    if isinstance(item, BaseTool):
        tool = item
    elif isinstance(item, dict):
        spec = item.get("function", item) if item.get("type") == "function" else item
        name = spec.get("name") or spec.get("title")
        if not name:
            raise ValueError(f"tool schema without a name: {item!r}")
        params = spec.get("parameters") or spec.get("input_schema") or {}
        properties = (params.get("properties") or {}) if isinstance(params, dict) else {}
        args = list(properties.keys()) if isinstance(properties, dict) else []
        explicit = domain or item.get("domain") or spec.get("domain")
        return ToolRecord(
            str(name),
            str(spec.get("description") or ""),
            str(explicit or infer_domain(str(name))),
            args,
            None,
            dict(item),
            _argument_descriptions(properties, args),
            domain_inferred=not explicit,
        )
    elif isinstance(item, type) and (is_basemodel_subclass(item) or is_typeddict(item)):
        # A schema class, as bind_tools takes them: described, never run (calling a
        # pydantic class only builds it, which would read as the tool having run).
        return _record(convert_to_openai_tool(item), domain)
    elif callable(item):
        name = getattr(item, "__name__", None)
        if not isinstance(name, str) or not name.isidentifier():
            # functools.partial, a callable object, a lambda: no usable tool name.
            raise TypeError(
                f"cannot name a tool made from {item!r}: wrap it as "
                "StructuredTool.from_function(func, name=..., description=...)"
            )
        doc = (item.__doc__ or "").strip()
        # LangChain needs a description; a function without a docstring gets its name.
        tool = StructuredTool.from_function(item, description=doc or name.replace("_", " "))
        if not doc:
            args = list(tool.args.keys())
            return ToolRecord(
                tool.name,
                "",
                str(domain or infer_domain(tool.name)),
                args,
                tool,
                None,
                _argument_descriptions(tool.args, args),
                domain_inferred=not domain,
            )
    else:
        raise TypeError(f"cannot index {type(item).__name__} as a tool")
    metadata = tool.metadata or {}
    explicit = domain or metadata.get("domain")
    try:
        properties = tool.args
        args = list(properties.keys())
    except Exception:  # a tool with an unusual schema still gets indexed
        properties, args = {}, []
    return ToolRecord(
        tool.name,
        tool.description or "",
        str(explicit or infer_domain(tool.name)),
        args,
        tool,
        None,
        _argument_descriptions(properties, args),
        domain_inferred=not explicit,
    )


class ToolIndex:
    """Search a tool catalog by stated intent.

    Tools (LangChain ``BaseTool``s, plain functions, or JSON schemas) are scored by a
    hybrid of two signals: the cosine similarity of the query's embedding to the tool's
    (``name: description (arguments: ...)``, with any LangChain ``Embeddings``; the
    packaged static model by default) and a lexical coverage score (the idf-weighted
    share of the query's words found in the tool's name, description and arguments,
    typo- and accent-tolerant; with embeddings, a query word also matches catalog
    words close to it in meaning, by the packaged static model's word vectors,
    counted ``neighbor_weight`` times their similarity). The score is ``semantic_weight * cosine +
    (1 - semantic_weight) * lexical``; without embeddings it is the lexical score.

    The index is built lazily on the first search and updated incrementally: adding
    tools embeds only the new ones, removing drops rows. Vectors live in one float32
    matrix, so a search is one matrix-vector product whatever the catalog size.

    A search answers in one of five ways (``ToolSearchResult.fallback``):

    - ``"name"``: the query names tools exactly (a word containing ``_`` or ``.`` that
      is a tool name, or a query made only of tool names): those are loaded; words
      besides the names and mere requests for them ("load", "please") are searched as
      a request of their own, whose tools follow (``ToolSearchResult.rest``).
    - ``None`` (confident): the best score reaches ``threshold``; the tools that do (at
      most ``k``) are loaded, and a match reaching ``domain_threshold``, or two matches
      in one domain, bring that domain's other tools (at most ``max_siblings``).
    - ``"candidates"``: the best score is below ``threshold`` but reaches
      ``candidate_threshold``: the best ``max_candidates`` tools are loaded anyway,
      marked ``low_confidence``, with the domain list so the agent can refine.
    - ``"domain"``: a domain named in the query (or passed) gets its tools.
    - ``"domains"``: nothing is loaded; ``domains`` lists what exists.

    No answer loads more than ``max_loaded`` tools. Thresholds and the weight default
    to the calibration stored for the embedding model (:mod:`.calibration`).

    Example:
        >>> def email_send(to: str, body: str) -> str:
        ...     "Send an email."
        ...     return "sent"
        >>> index = ToolIndex([email_send], embeddings=None)
        >>> index.search("send an email to John").names
        ['email_send']
    """

    def __init__(
        self,
        tools: Iterable[ToolLike] = (),
        *,
        embeddings: Embeddings | Literal["auto"] | None = "auto",
        threshold: float | None = None,
        domain_threshold: float | None = None,
        candidate_threshold: float | None = None,
        semantic_weight: float | None = None,
        neighbor_weight: float | None = None,
        max_siblings: int = 8,
        max_candidates: int = 8,
        max_loaded: int = 8,
        crosslingual: bool | None = None,
    ) -> None:
        self._embeddings = default_embeddings() if embeddings == "auto" else embeddings
        for option, count, least in (
            ("max_loaded", max_loaded, 1),
            ("max_candidates", max_candidates, 1),
            ("max_siblings", max_siblings, 0),
        ):
            # 8.0 read from a config file passed this check, then failed most searches.
            if isinstance(count, bool) or not isinstance(count, int) or count < least:
                raise ValueError(f"{option} must be an int >= {least}, got {count!r}")
        self.calibration: SearchCalibration = calibration_for(self._embeddings)
        cal = self.calibration
        self.threshold = cal.threshold if threshold is None else threshold
        self.domain_threshold = (
            cal.domain_threshold if domain_threshold is None else domain_threshold
        )
        self.candidate_threshold = (
            cal.candidate_threshold if candidate_threshold is None else candidate_threshold
        )
        weight = cal.semantic_weight if semantic_weight is None else semantic_weight
        if not 0.0 <= weight <= 1.0:
            raise ValueError(f"semantic_weight must be within 0..1 (got {weight})")
        self.semantic_weight = weight if self._embeddings is not None else 0.0
        self.neighbor_weight = cal.neighbor_weight if neighbor_weight is None else neighbor_weight
        self.max_siblings = max_siblings
        self.max_candidates = max_candidates
        self.max_loaded = max_loaded
        if crosslingual is None:
            # On for the engines known to read English only (the lexical scorer, the
            # packaged static model, MiniLM); any other model may read other languages
            # itself, and a table written for English words would only get in its way.
            crosslingual = self._embeddings is None or embedding_model_id(
                self._embeddings
            ).startswith(_ENGLISH_ONLY_MODELS)
        self.crosslingual: bool = crosslingual
        self._records: dict[str, ToolRecord] = {}
        # lower-cased name -> names with it (ordered set: the latest added answers)
        self._lower: dict[str, dict[str, None]] = {}
        self._rows: list[str] = []  # matrix row -> tool name ("" for a removed row)
        self._row_of: dict[str, int] = {}
        self._dead = 0  # rows of removed tools not yet compacted
        # (row names, rows of removed tools): a copy for searches, made once per change
        # of the rows instead of once per search (50,000 names per search was a third
        # of a 50k-tool search's time).
        self._view: tuple[list[str], np.ndarray] | None = None
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._pending: dict[str, None] = {}  # added, not yet embedded (ordered set)
        # Tools with a row but no vector yet: the embedding model failed when their row
        # was made (see _sync). Searches are lexical while there are any.
        self._unembedded: dict[str, None] = {}
        # Tools whose text failed on its own while the model embedded others: a row, no
        # vector (scored by their words), asked again when due (see _sync). Rejected from
        # _REJECT_STRIKES failures on.
        self._apart: dict[str, _Apart] = {}
        # The model's failure for every text, and the tools it failed for (see
        # _embed_apart): while the same batch fails the same way, it is not split again.
        self._down: tuple[str, frozenset[str]] | None = None
        self._lexical = self._new_lexical()
        self._by_domain: dict[str, dict[str, None]] = {}  # domain -> names (ordered set)
        # Domains, largest first, with their counts: made once per change of the catalog
        # (sorting 10,000 domains per low-confidence answer took 10 ms at 50,000 tools).
        self._domain_order: list[tuple[str, int]] | None = None
        # first word of names with an inferred domain -> those names, and how many of
        # their descriptions use it as a verb / have a description (see add()).
        self._head_names: dict[str, dict[str, None]] = {}
        self._head_votes: dict[str, list[int]] = {}
        self._lock = threading.RLock()
        self._reused = 0  # vectors taken from a saved index instead of embedded (load())
        self.add(tools)

    def _new_lexical(self) -> LexicalScorer:
        if self._embeddings is None:
            return LexicalScorer(light_words=_VERBS, light_weight=VERB_WEIGHT)
        words = load_embeddings("static")
        assert words is not None

        def vectors(texts: list[str]) -> np.ndarray:
            return np.asarray(words.embed_documents(texts), dtype=np.float32)

        return LexicalScorer(vectors, light_words=_VERBS, light_weight=VERB_WEIGHT)

    @property
    def embeddings(self) -> Embeddings | None:
        """The embedding model (``None``: lexical search only)."""
        return self._embeddings

    @property
    def embedding_rejected(self) -> dict[str, str]:
        """Tools whose text the embedding model rejects (name -> ``"Type: message"``).

        A tool is rejected when its text failed on its own, while the model embedded
        other texts, in two searches' syncs. It has no vector and is scored by its words
        alone; it is asked again 10 minutes later, then after twice as long at each
        rejection (a day at most), and embedded once the model takes it. A copy."""
        with self._lock:
            return {
                n: a.error
                for n, a in self._apart.items()
                if a.strikes >= _REJECT_STRIKES and n in self._row_of
            }

    # -- catalog --------------------------------------------------------------------

    def add(self, tools: Iterable[ToolLike] | ToolLike, *, domain: str | None = None) -> list[str]:
        """Add tools (a later tool with an existing name replaces it); returns their names.

        A tool without a domain of its own gets the one its name implies
        (:func:`infer_domain`). A name whose first word is not a known verb keeps that
        word as its domain, unless the catalog shows it is a verb: when at least
        half of the described tools whose names start with it have descriptions that
        start with it followed by a determiner ("Track a parcel", "Check in the guest"), every such
        name is read as verb-first (``track_package`` -> ``package``,
        ``track_expense`` -> ``expense``; ``weather_forecast``, described "Weather
        forecast for a city", stays in ``weather``). The judgment follows the catalog
        as tools are added and removed.
        """
        items = [tools] if isinstance(tools, BaseTool | dict) or callable(tools) else list(tools)
        names: list[str] = []
        added: dict[str, ToolRecord] = {}
        with self._lock:
            for item in items:
                record = _record(item, domain)
                old = self._records.get(record.name)
                if record.name in added and old is not None:
                    _warn_shadowed(old, record)
                added[record.name] = record
                if old is not None:
                    self._drop_row(record.name)
                    self._unlist(record.name, old.domain)
                    self._judge(old, -1)
                self._records[record.name] = record
                same = self._lower.setdefault(record.name.lower(), {})
                same.pop(record.name, None)
                same[record.name] = None
                self._by_domain.setdefault(record.domain, {})[record.name] = None
                self._domain_order = None
                self._judge(record, +1)
                self._pending[record.name] = None
                names.append(record.name)
        return names

    def _judge(self, record: ToolRecord, sign: int) -> None:
        """Count a record in (``+1``) or out of (``-1``) its first word's vote, and
        re-read the domains of that word's names when the verdict changes."""
        head = _head(record)
        if head is None:
            return
        votes = self._head_votes.setdefault(head, [0, 0])
        before = _is_verb(votes)
        use = _used_as_verb(record, head)
        if use is not None:
            votes[0] += sign * int(use)
            votes[1] += sign
        names = self._head_names.setdefault(head, {})
        if sign > 0:
            names[record.name] = None
        else:
            names.pop(record.name, None)
        verb = _is_verb(votes)
        if not names:
            del self._head_names[head], self._head_votes[head]
            return
        if verb == before and sign < 0:
            return
        # A verdict that changed re-reads all the word's names; otherwise only the new one.
        for name in names if verb != before else (record.name,):
            member = self._records[name]
            wanted = infer_domain(name, verb_first=verb)
            if member.domain != wanted:
                self._unlist(name, member.domain)
                member.domain = wanted
                self._by_domain.setdefault(wanted, {})[name] = None
                self._domain_order = None

    def remove(self, names: Iterable[str] | str) -> None:
        """Remove tools by name (unknown names are ignored)."""
        with self._lock:
            for name in [names] if isinstance(names, str) else list(names):
                record = self._records.pop(name, None)
                if record is not None:
                    # Another tool may differ only in case: it keeps the name lookup.
                    same = self._lower.get(name.lower(), {})
                    same.pop(name, None)
                    if not same:
                        self._lower.pop(name.lower(), None)
                    self._unlist(name, record.domain)
                    self._judge(record, -1)
                    self._drop_row(name)
                    self._pending.pop(name, None)

    def _unlist(self, name: str, domain: str) -> None:
        """Take ``name`` out of its domain; a domain left empty goes too (add/remove
        cycles of tools in ever new domains would otherwise grow the table for good)."""
        members = self._by_domain.get(domain)
        self._domain_order = None
        if members is not None:
            members.pop(name, None)
            if not members:
                del self._by_domain[domain]

    def _drop_row(self, name: str) -> None:
        row = self._row_of.pop(name, None)
        self._unembedded.pop(name, None)
        self._apart.pop(name, None)
        if row is not None:
            self._rows[row] = ""
            self._lexical.forget(row)
            self._dead += 1
            self._view = None

    def __len__(self) -> int:
        return len(self._records)

    def __contains__(self, name: object) -> bool:
        return name in self._records

    def get(self, name: str) -> ToolRecord | None:
        """The record for ``name``, or ``None``."""
        return self._records.get(name)

    def records(self) -> list[ToolRecord]:
        """Every record, in insertion order."""
        with self._lock:
            return list(self._records.values())

    def domains(self) -> dict[str, int]:
        """Domain name -> number of tools."""
        with self._lock:  # another thread may add or remove tools meanwhile
            return {d: len(names) for d, names in self._by_domain.items() if names}

    def _domain_members(self, domain: str, limit: int, skip: Iterable[str] = ()) -> list[str]:
        """At most ``limit`` names of ``domain`` not in ``skip``, in insertion order: a copy
        taken under the lock (the domain's set may change while a search reads it)."""
        skipped = set(skip)
        with self._lock:
            members = self._by_domain.get(domain, {})
            wanted = (n for n in members if n not in skipped)
            return list(itertools.islice(wanted, max(limit, 0)))

    def memory_bytes(self) -> int:
        """Approximate memory held by the vectors."""
        return int(self._matrix.nbytes)

    def row_names(self) -> list[str]:
        """Tool name of each score row (``""`` for a removed tool); builds the index."""
        self._sync()
        with self._lock:
            return list(self._rows)

    # -- building -------------------------------------------------------------------

    def _english(self, record: ToolRecord) -> tuple[str, ...]:
        """English words for a record described in another language (none with
        ``crosslingual`` off, or for an English description)."""
        return _english_of(record.description) if self.crosslingual else ()

    def _document(self, record: ToolRecord) -> str:
        """What is embedded for ``record``: its text, and for a tool described in
        another language the English words of its description (English-only models
        read "Einen Termin im Kalender erstellen" as word pieces)."""
        english = self._english(record)
        return record.text + (f" ({' '.join(english)})" if english else "")

    def _index_lexical(self, row: int, record: ToolRecord) -> None:
        fields = record.lexical_fields()
        english = self._english(record)
        if english:
            fields.append((" ".join(english), _TRANSLATION_WEIGHT))
        self._lexical.add(row, fields)

    def _sync(
        self, reuse: dict[str, tuple[str, np.ndarray]] | None = None, *, strict: bool = False
    ) -> bool:
        """Embed pending tools and compact removed rows (called before a search).

        ``reuse`` maps tool names to (fingerprint, unit vector) read from a saved index:
        a pending tool whose fingerprint is the same now takes that vector instead of
        being embedded (see :meth:`load`).

        When the embedding model fails (a server down), the pending tools get their rows
        all the same, lexically indexed with no vector (``_unembedded``): they are found
        by the lexical fallback of :meth:`_scored`, and embedded by a later sync once the
        model answers. ``strict`` (:meth:`save`, :meth:`load`) raises the failure instead.
        When the model rejects some tools' texts (a permanent failure), the batch is
        split (:meth:`_embed_apart`): the others are embedded, those are kept ``_apart``
        and asked again alone (at the next sync, then when due: :attr:`embedding_rejected`).
        Returns whether the model failed here (the search then does not ask it again).
        """
        with self._lock:
            if self._dead and self._dead * 4 > len(self._rows):
                keep = [i for i, name in enumerate(self._rows) if name]
                self._matrix = self._matrix[keep] if self._matrix.size else self._matrix
                self._rows = [self._rows[i] for i in keep]
                self._row_of = {n: i for i, n in enumerate(self._rows)}
                self._dead = 0
                self._view = None
                self._lexical = self._new_lexical()
                for i, name in enumerate(self._rows):
                    self._index_lexical(i, self._records[name])
            now = _clock()
            again = [
                (n, self._records[n])
                for n, a in self._apart.items()
                if a.due <= now and n in self._records
            ]
            if not self._pending and not self._unembedded and not again:
                return False
            pending = [(n, self._records[n]) for n in self._pending if n in self._records]
            self._pending = {n: None for n, _ in pending}  # removed tools forgotten
            retry = [(n, self._records[n]) for n in self._unembedded]
            strikes = {n: self._apart[n].strikes for n, _ in again}
            # The strikes each tool had when this sync began: two concurrent syncs that
            # embed the same tools in one failure count one strike, not two.
            seen = {
                n: (self._apart[n].strikes if n in self._apart else 0)
                for n, _ in [*pending, *retry, *again]
            }
        # Embedded outside the lock: a remote model must not block other searches, nor
        # tools being added or removed meanwhile.
        todo = pending + retry
        vectors: dict[int, np.ndarray] = {}
        rejected: dict[int, str] = {}
        down: Exception | None = None
        if self._embeddings is not None and todo:
            records = [r for _, r in todo]
            try:
                vectors = dict(enumerate(self._vectors(self._embeddings, records, reuse or {})))
                self._down = None
            except Exception as exc:
                vectors, rejected, down = self._embed_apart(
                    self._embeddings, records, reuse or {}, exc
                )
        if self._embeddings is not None and again and down is None:
            down = self._embed_again(self._embeddings, todo, again, strikes, vectors, rejected)
        if vectors:  # the model answers (for the other tools, if some failed)
            embedding_answered(logger, self._embeddings)
        failed = False
        if down is not None:
            if strict:
                raise down from None
            embedding_failed(logger, down, self._embeddings)  # raises what only the user can fix
            failed = True
        with self._lock:
            # A tool removed, replaced, or already indexed by another thread meanwhile is
            # skipped.
            fresh = [
                i
                for i, (name, record) in enumerate(pending)
                if name in self._pending and self._records.get(name) is record
            ]
            for i in fresh:
                name, record = pending[i]
                del self._pending[name]
                row = len(self._rows)
                self._rows.append(name)
                self._view = None
                self._row_of[name] = row
                self._index_lexical(row, record)
                if self._embeddings is not None:
                    self._unembedded[name] = None
            now = _clock()
            for i, error in rejected.items():
                name, record = todo[i]
                if name in self._row_of and self._records.get(name) is record:
                    self._unembedded.pop(name, None)
                    old = self._apart.get(name)
                    if old is not None and old.strikes > seen.get(name, 0):
                        continue  # a concurrent sync counted this failure already
                    count = (old.strikes if old else 0) + 1
                    wait = (
                        0.0  # a suspect: asked again alone at the next sync
                        if count < _REJECT_STRIKES
                        else min(_REJECT_WAIT * 2 ** (count - _REJECT_STRIKES), _REJECT_WAIT_MAX)
                    )
                    self._apart[name] = _Apart(error, count, now + wait)
                    if count == _REJECT_STRIKES:
                        logger.warning(
                            "librarian: the embedding model rejects the tool %s (%s); it is "
                            "searched by its words only (asked again in %d s)",
                            name,
                            error,
                            wait,
                        )
            if not vectors:
                if self._matrix.size:  # rows without a vector stay zero until embedded
                    self._matrix = self._padded(self._matrix.shape[1])
                return failed
            self._matrix = self._padded(next(iter(vectors.values())).shape[0])
            rows: list[int] = []
            taken: list[np.ndarray] = []
            for i, vector in vectors.items():
                name, record = todo[i]
                at = self._row_of.get(name)
                if at is not None and self._records.get(name) is record:
                    rows.append(at)
                    taken.append(vector)
                    self._unembedded.pop(name, None)
                    self._apart.pop(name, None)
            if rows:
                self._matrix[rows] = np.stack(taken)
        return failed

    def _embed_again(
        self,
        embeddings: Embeddings,
        todo: list[tuple[str, ToolRecord]],
        again: list[tuple[str, ToolRecord]],
        strikes: dict[str, int],
        vectors: dict[int, np.ndarray],
        rejected: dict[int, str],
    ) -> Exception | None:
        """Ask the model again for the tools kept apart that are due (``again``), each
        alone (a tool it still rejects costs one call), appended to ``todo`` with their
        vectors or failures put in ``vectors``/``rejected``. A failure of a suspect (one
        strike) counts only if the model is seen to embed another text in this sync
        (else the model fails, returned as its failure, and the tool is asked again at
        the next sync); a rejected tool's failure pushes its next try further off."""
        failures: dict[int, tuple[str, Exception]] = {}
        for name, record in again:
            i = len(todo)
            todo.append((name, record))
            try:
                (vector,) = self._vectors(embeddings, [record], {})
            except Exception as exc:
                if not _tells_of_a_text(exc):
                    return exc  # the model fails: the others are asked at the next sync
                failures[i] = (describe(exc), exc)
                continue
            vectors[i] = vector
        unproven = [i for i in failures if strikes[todo[i][0]] < _REJECT_STRIKES]
        if unproven and not vectors and not rejected and not self._answers(embeddings):
            return failures[unproven[0]][1]  # nothing embedded: the model fails
        rejected.update((i, text) for i, (text, _) in failures.items())
        return None

    def _embed_apart(
        self,
        embeddings: Embeddings,
        records: list[ToolRecord],
        reuse: dict[str, tuple[str, np.ndarray]],
        error: Exception,
    ) -> tuple[dict[int, np.ndarray], dict[int, str], Exception | None]:
        """After ``error`` failed the whole batch ``records``: (unit vectors by position,
        rejected positions -> ``"Type: message"``, the model's failure or ``None``).

        A provider fails a whole batch for one text it rejects (too long, unreadable).
        When ``error`` is permanent (kind ``"failure"`` of the failure policy), the batch
        is split in halves, again and again, so only the tools the model rejects on
        their own go without a vector. A tool is rejected only when the model is seen
        to work meanwhile (another part of the batch embedded, or a tool embedded
        before embedded again); otherwise the model fails for every text and ``error``
        is returned as its failure, remembered so the same batch failing the same way
        is not split again (a batch with other tools is). Any other kind (a timeout, a
        rate limit, a refused key, an interrupt) says nothing of one tool: it is returned
        at once, or as soon as a part meets it, and the tools not embedded yet are
        retried by a later sync.
        At most ``8 * log2(n) + 8`` calls: what is left unembedded then is retried.
        """
        batch_of = (cause_key(error), frozenset(r.name for r in records))
        if not _tells_of_a_text(error) or self._down == batch_of:
            return {}, {}, error
        vectors: dict[int, np.ndarray] = {}
        suspects: dict[int, str] = {}
        parts: list[list[int]] = []
        if len(records) == 1:
            suspects[0] = describe(error)
        else:
            half = len(records) // 2
            parts = [list(range(half, len(records))), list(range(half))]
        works: bool | None = None  # the model embedded something meanwhile

        def proven() -> bool:
            nonlocal works
            if vectors:
                return True
            if works is None:
                works = self._answers(embeddings)
            return works

        budget = 8 * len(records).bit_length() + 8
        while parts and budget > 0:
            part = parts.pop()
            budget -= 1
            try:
                got = self._vectors(embeddings, [records[i] for i in part], reuse)
            except Exception as exc:
                if not _tells_of_a_text(exc):
                    return vectors, {}, exc
                if len(part) > 1:
                    half = len(part) // 2
                    parts += [part[half:], part[:half]]
                    continue
                suspects[part[0]] = describe(exc)
                if len(suspects) >= 2 and not proven():
                    break  # two texts failed, nothing embedded: the model fails
                continue
            vectors.update(zip(part, got, strict=True))
        if suspects and not proven():
            self._down = batch_of
            return {}, {}, error
        self._down = None
        return vectors, suspects, None

    def _answers(self, embeddings: Embeddings) -> bool:
        """Whether the model embeds a tool it embedded before (one call; ``False`` when
        there is none)."""
        with self._lock:
            known = next(
                (
                    self._records[name]
                    for name in self._rows
                    if name and name not in self._unembedded and name not in self._apart
                ),
                None,
            )
        if known is None:
            return False
        try:
            embeddings.embed_documents([self._document(known)])
        except Exception:
            return False
        return True

    def _padded(self, width: int) -> np.ndarray:
        """The matrix with a zero row for each row it does not cover yet (under the lock)."""
        missing = len(self._rows) - self._matrix.shape[0]
        if self._matrix.size == 0:
            return np.zeros((len(self._rows), width), dtype=np.float32)
        if missing <= 0:
            return self._matrix
        return np.vstack([self._matrix, np.zeros((missing, width), dtype=np.float32)])

    def _vectors(
        self,
        embeddings: Embeddings,
        records: list[ToolRecord],
        reuse: dict[str, tuple[str, np.ndarray]],
    ) -> np.ndarray:
        """Unit vectors for ``records``: from ``reuse`` for a record whose fingerprint
        matches, embedded for the others.

        The first reusable record is embedded all the same, as a check: when its saved
        vector has another width or differs from the fresh one (cosine below
        ``_SAME_VECTOR``: a model changed under the same id), nothing is reused."""
        kept: dict[int, np.ndarray] = {}
        if reuse:
            for i, record in enumerate(records):
                saved = reuse.get(record.name)
                if saved is not None and saved[0] == self._fingerprint(record):
                    kept[i] = saved[1]
        probe = next(iter(kept), None)
        check = kept.pop(probe) if probe is not None else None
        todo = [i for i in range(len(records)) if i not in kept]
        fresh: np.ndarray | None = None
        if todo:
            documents = [self._document(records[i]) for i in todo]
            fresh = _unit_rows(embeddings.embed_documents(documents), len(documents))
        if check is not None and probe is not None:
            assert fresh is not None
            now = fresh[todo.index(probe)]
            if now.shape != check.shape or float(now @ check) < _SAME_VECTOR:
                logger.warning(
                    "saved tool vectors do not match the model %s (another width or "
                    "other vectors under the same id): embedding every tool",
                    embedding_model_id(embeddings),
                )
                return self._vectors(embeddings, records, {})
        if not kept:
            assert fresh is not None
            return fresh
        out = np.empty((len(records), next(iter(kept.values())).shape[0]), dtype=np.float32)
        for i, vector in kept.items():
            out[i] = vector
        if fresh is not None:
            out[todo] = fresh
        self._reused += len(kept)
        return out

    def _fingerprint(self, record: ToolRecord) -> str:
        """SHA-256 of everything a tool's vector is computed from: its name, description,
        arguments schema, and the exact text embedded (which also follows the
        cross-lingual reading of its description)."""
        schema: Any = record.schema
        if schema is None and record.tool is not None:
            try:
                schema = record.tool.args
            except Exception:  # an unusual schema: the embedded text still counts
                schema = None
        parts = [
            record.name,
            record.description,
            record.arguments,
            record.argument_descriptions,
            schema,
            self._document(record),
        ]
        try:
            text = json.dumps(parts, sort_keys=True, ensure_ascii=True, default=repr)
        except (TypeError, ValueError):  # keys of mixed types, circular values
            text = repr(parts)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    # -- persistence ----------------------------------------------------------------

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the tools' vectors to ``path``, for :meth:`load` to skip embedding them.

        The file records the embedding model's id and, per tool, its name and a
        fingerprint of its name, description, arguments schema and embedded text; the
        tools themselves are not saved (pass them to :meth:`load`). Pending tools are
        embedded first. The write is atomic (a temporary file renamed over ``path``);
        no pickle is involved.

        Raises:
            IndexStoreError: ``path`` cannot be written.
            Exception: the embedding model's failure (a file without the vectors would
                be of no use), unlike a search, which falls back to lexical scores. A
                tool whose text the model rejects (:attr:`embedding_rejected`) is left
                out of the file instead.
        """
        self._sync(strict=True)
        with self._lock:
            # A tool the model rejects has no vector to save: a load asks the model again.
            names = [name for name in self._rows if name and name not in self._apart]
            fingerprints = [self._fingerprint(self._records[name]) for name in names]
            if self._embeddings is not None and self._matrix.size:
                matrix = self._matrix[[self._row_of[name] for name in names]]
            else:
                matrix = np.zeros((len(names), 0), dtype=np.float32)
        model = None if self._embeddings is None else embedding_model_id(self._embeddings)
        write_tool_vectors(path, model, list(zip(names, fingerprints, strict=True)), matrix)

    @classmethod
    def load(
        cls, path: str | os.PathLike[str], tools: Iterable[ToolLike] = (), **options: Any
    ) -> ToolIndex:
        """An index over ``tools`` built with the vectors :meth:`save` wrote to ``path``.

        ``options`` are :class:`ToolIndex`'s keyword arguments (``embeddings``,
        thresholds, ...). A tool whose name and fingerprint (name, description,
        arguments schema, embedded text) match the file's gets its saved vector; a new
        or changed tool is embedded; a saved tool not in ``tools`` is dropped. A file
        written with another embedding model (by id) gives no vector: every tool is
        embedded again (logged). One reusable tool is embedded all the same as a check:
        if its saved vector differs (a model changed under the same id), every tool is
        embedded again (logged). The index is ready to search when this returns; save it
        again to refresh the file.

        Raises:
            IndexStoreError: the file is missing, unreadable, truncated or not a tool
                index file (the message names ``path``); nothing in it is executed.
        """
        saved = read_tool_vectors(path)
        index = cls(tools, **options)
        reuse: dict[str, tuple[str, np.ndarray]] = {}
        if index._embeddings is not None:
            model = embedding_model_id(index._embeddings)
            if saved.model == model:
                reuse = {
                    name: (fingerprint, saved.vectors[i])
                    for i, (name, fingerprint) in enumerate(saved.tools)
                }
            else:
                logger.info(
                    "tool index file %s was made with %s, this index uses %s: embedding every tool",
                    path,
                    saved.model or "no embedding model",
                    model,
                )
        index._sync(reuse, strict=True)  # a load that cannot embed says so
        logger.debug(
            "loaded %s: %d of %d tools took a saved vector", path, index._reused, len(index)
        )
        return index

    # -- scoring --------------------------------------------------------------------

    def translated(self, query: str) -> tuple[str, dict[str, list[tuple[str, float]]]]:
        """The query with its non-English words read in English, and those words.

        Words of the packaged cross-lingual table (frequent words of other languages)
        are replaced by their English words in the returned text (which is what gets
        embedded) and listed, with their weights, for the lexical half, when the
        request reads as foreign: it holds frequent function words of another language
        ("je", "und", "los"; never translated themselves), at least as many as English
        ones ("add a todo to buy gelato" is English: "todo" is both), two table words or
        more, or table words make up more than half of it. A lone table word in an
        English request is most likely English jargon the model's vocabulary lacks
        ("repo"), and is left alone; so are words under four letters ("dns"). A table
        word the catalog itself uses is kept and, in a request that reads as foreign,
        also read in English (it is no evidence that the request is foreign). Unchanged when
        ``crosslingual`` is off or nothing is replaced.
        """
        if not self.crosslingual:
            return query, {}
        self._sync()  # the catalog's words, pending tools included
        return self._translated(query)

    def _translated(self, query: str) -> tuple[str, dict[str, list[tuple[str, float]]]]:
        """:meth:`translated` of an index already synced (``crosslingual`` on or off)."""
        if not self.crosslingual:
            return query, {}
        query = _clip(query)
        words = tokenize(fold_accents(query))
        content = [w for w in words if w not in STOPWORDS]
        markers = function_words()
        found: dict[str, list[tuple[str, float]]] = {}
        # Table words the catalog uses too: read in English as well when the request
        # reads as foreign, and kept (a French tool's "envoyer" must not keep an
        # "envoyer un courriel" from reaching the email tools), but no evidence either
        # way that the request is foreign (English jargon such as "repo" is in the table).
        shared: dict[str, list[tuple[str, float]]] = {}
        unread = 0  # words neither the table, the model's vocabulary nor the catalog knows
        guessed = 0  # words read by the dictionary form they may inflect
        for word in content:
            if word in markers or len(word) < _MIN_TRANSLATED:
                continue
            english, listed = _english_words(word)
            with self._lock:  # the scorer is rebuilt when another thread compacts
                known = self._lexical.knows(word)
            if known:
                if english:
                    shared[word] = [(w, _TRANSLATION_WEIGHT) for w in english]
                continue
            if english:
                found[word] = [(w, _TRANSLATION_WEIGHT) for w in english]
                # Read as an inflection only: as weak a sign of another language as a
                # word nothing reads (an English plural may look like a French verb).
                guessed += not listed
            elif word.isalpha() and word not in _model_words():
                unread += 1
        foreign = _reads_foreign(len(found) - guessed, unread + guessed, words, content)
        if not (found or shared) or not foreign:
            return query, {}
        out: list[str] = []
        for word in words:
            if word in found:
                out.extend(w for w, _ in found[word])
            elif word in shared:
                out.append(word)
                out.extend(w for w, _ in shared[word])
            else:
                out.append(word)
        return " ".join(out), found | shared

    def embed_query(self, query: str) -> list[float] | None:
        """The query vector (``None`` for the lexical scorer); see :meth:`translated`."""
        if self._embeddings is None:
            return None
        return list(self._embeddings.embed_query(self.translated(query)[0]))

    def score_parts(
        self, query: str, query_vector: Sequence[float] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(cosine, lexical) score arrays, one entry per row of :meth:`row_names`.

        Without embeddings the cosine array is all zeros.
        """
        cosine, lexical, _, _, _ = self._scored(query, query_vector)
        return cosine, lexical

    def _rows_view(self) -> tuple[list[str], np.ndarray]:
        """(row names, indices of removed rows), shared by searches until the rows
        change: callers must not modify them. Call under the lock."""
        if self._view is None:
            rows = list(self._rows)
            dead = np.fromiter((i for i, r in enumerate(rows) if not r), dtype=np.intp)
            self._view = (rows, dead)
        return self._view

    def _scored(
        self, query: str, query_vector: Sequence[float] | None
    ) -> tuple[np.ndarray, np.ndarray, list[str], np.ndarray, bool]:
        """(cosine, lexical, row names, removed rows, lexical only): one snapshot, so tools
        added or removed by another thread meanwhile never misalign scores and names. The
        query is embedded outside the lock (a remote model must not block other searches).

        Lexical only: the index has an embedding model but it failed (for the query, or
        for tools not embedded yet); the cosines are then all zero and must not count.
        """
        query = _clip(query)
        # A model that just failed on the tools is not asked for the query too: a server
        # that timed out would cost the timeout twice per search.
        failed = self._sync()
        text, translations = self._translated(query)
        q: np.ndarray | None = None
        if self._embeddings is not None and not failed:
            matrix = self._matrix  # the tools' width, when they have vectors
            width = matrix.shape[1] if matrix.size else None
            if query_vector is None:
                try:
                    q = _unit_rows([self._embeddings.embed_query(text)], 1, width)[0]
                except Exception as exc:
                    embedding_failed(
                        logger, exc, self._embeddings
                    )  # raises what only the user can fix
                else:
                    embedding_answered(logger, self._embeddings)
            else:
                q = _unit_rows([query_vector], 1, width)[0]
        with self._lock:
            rows, dead = self._rows_view()
            n = len(rows)
            lexical = self._lexical.scores(
                query, n, neighbor_weight=self.neighbor_weight, translations=translations
            )
            lexical_only = self._embeddings is not None and (q is None or bool(self._unembedded))
            if q is None or n == 0 or self._matrix.shape[0] < n or lexical_only:
                return np.zeros(n, dtype=np.float32), lexical, rows, dead, lexical_only
            # einsum, not ``@``: a matrix-vector product through BLAS ran 3x slower
            # on two cores (its threads compete with each other and with the process);
            # numpy's own loop streams the matrix once on one core (docs/tools.md).
            cosine = np.einsum("ij,j->i", self._matrix[:n], q)
            return cosine, lexical, rows, dead, False

    def _combined(
        self, query: str, query_vector: Sequence[float] | None
    ) -> tuple[np.ndarray, list[str], bool]:
        """(hybrid scores, row names, lexical only): see :meth:`_scored`."""
        cosine, lexical, rows, removed, lexical_only = self._scored(query, query_vector)
        w = 0.0 if lexical_only else self.semantic_weight
        combined = lexical.copy() if w == 0.0 else w * cosine + (1.0 - w) * lexical
        if removed.size:  # removed tools not compacted yet never rank
            combined[removed] = -np.inf
        return combined, rows, lexical_only

    @staticmethod
    def _top(
        combined: np.ndarray, rows: list[str], limit: int, allowed: np.ndarray | None = None
    ) -> list[tuple[str, float]]:
        if allowed is not None:
            combined = np.where(allowed, combined, -np.inf)
        limit = min(limit, len(rows))
        if limit <= 0:
            return []
        if limit < len(rows):
            top = np.argpartition(-combined, limit - 1)[:limit]
        else:
            top = np.arange(len(rows))
        top = top[np.argsort(-combined[top], kind="stable")]
        return [(rows[i], float(combined[i])) for i in top if rows[i] and combined[i] > -np.inf]

    def rank(
        self, query: str, *, limit: int = 10, query_vector: Sequence[float] | None = None
    ) -> list[tuple[str, float]]:
        """The best ``limit`` tools by hybrid score, best first (no thresholds applied)."""
        combined, rows, _ = self._combined(query, query_vector)
        return self._top(combined, rows, limit)

    def scores(self, query: str, query_vector: Sequence[float] | None = None) -> dict[str, float]:
        """Hybrid score of every tool (pass ``query_vector`` to reuse an embedding)."""
        combined, rows, _ = self._combined(query, query_vector)
        return {name: float(s) for name, s in zip(rows, combined, strict=True) if name}

    # -- search ---------------------------------------------------------------------

    def named_tools(self, query: str) -> list[str]:
        """Tools the query names exactly.

        A word counts when it is a tool name and contains ``_`` or ``.`` (plain words
        such as ``search`` are intents, not names), or when the query is made only of
        tool names. Case aside, the name added last answers, unless a tool has the name
        exactly as written.
        """
        words = [w.strip(".:/-,;") for w in _NAME_TOKEN.findall(query)]
        words = [w for w in words if w]
        with self._lock:  # the name table may change while another thread adds tools
            hits = [
                w if w in self._records else next(reversed(same))
                for w in words
                if (same := self._lower.get(w.lower()))
            ]
        if words and len(hits) == len(words):
            return list(dict.fromkeys(hits))
        return list(dict.fromkeys(h for h in hits if "_" in h or "." in h))

    def _rest_of(self, query: str, named: Sequence[str]) -> str:
        """The words of ``query`` that are neither the tool names in ``named`` nor mere
        requests for them ("load", "please", "and"); "" when nothing else is left."""
        lowered = {n.lower() for n in named}
        rest = _NAME_TOKEN.sub(
            lambda m: " " if m.group().strip(".:/-,;").lower() in lowered else m.group(), query
        )
        words = [w for w in tokenize(fold_accents(rest)) if w not in STOPWORDS]
        if all(w in _REQUEST_WORDS or w.isdigit() for w in words):
            return ""
        kept = [w for w in rest.split() if w.strip(".,;:!?").lower() not in _REQUEST_WORDS]
        return " ".join(kept).strip(" ,;:.-")

    def domain_list(self, first: Iterable[str] = ()) -> dict[str, int]:
        """Domains with tool counts: ``first`` ones, then the largest (at most 40)."""
        with self._lock:  # another thread may add or remove tools meanwhile
            ordered = self._domain_order
            if ordered is None:
                counts = {d: len(names) for d, names in self._by_domain.items() if names}
                ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
                self._domain_order = ordered
            out = {d: n for d in dict.fromkeys(first) if (n := len(self._by_domain.get(d, ())))}
        for d, n in ordered:
            if len(out) >= MAX_DOMAINS_LISTED:
                break
            out.setdefault(d, n)
        return dict(itertools.islice(out.items(), MAX_DOMAINS_LISTED))

    def search(
        self,
        query: str,
        *,
        k: int = 5,
        domain: str | None = None,
        query_vector: Sequence[float] | None = None,
    ) -> ToolSearchResult:
        """Tools for a need stated in natural language (see the class docstring)."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive int, got {k!r}")
        query = _clip(query)
        wanted = domain.strip().lower() if isinstance(domain, str) and domain.strip() else None
        resolved = wanted
        with embedding_failures() as failed:  # a model that fails is asked once
            if wanted is not None and isinstance(query, str):
                resolved = self.resolve_domain(wanted)
                resolved = resolved.lower() if resolved is not None else None
            result = self._search(query, k, resolved, query_vector)
        if failed:
            result.embedding_error = "; ".join(failed)
        result.embedding_rejected = self.embedding_rejected
        if wanted is not None and resolved != wanted and result.fallback != "name":
            result.domain_requested = str(domain).strip()
            used = [d for d in self.domains() if d.lower() == resolved]
            result.domain_used = used[0] if used else None
        return result

    def resolve_domain(self, domain: str) -> str | None:
        """The known domain a ``domain=`` value stands for, or ``None``.

        Tried in order: the same name, case, spaces and punctuation aside
        (``"Print 3D"`` -> ``print3d``); the one domain whose name's words all occur in
        it (``"greenhouse automation"`` -> ``greenhouse``); else ``domain`` read as a
        query: the domain of its best-ranked tools, when the best reaches ``threshold``
        and that domain holds more than half of the top ``max_loaded`` tools reaching
        it (``"library"`` -> ``circulation`` when the circulation tools speak of the
        library). A value that fits no domain clearly gives ``None``.
        """
        if not isinstance(domain, str) or not domain.strip():
            return None
        known = list(self.domains())
        if domain in known:
            return domain
        folded = [d for d in known if d.casefold() == domain.strip().casefold()]
        if len(folded) == 1:
            return folded[0]
        squeezed = {_squeeze(d): d for d in known}
        wanted = _squeeze(domain)
        if wanted in squeezed:
            return squeezed[wanted]
        words = set(stem_terms(tokenize(_readable(domain).lower())))
        contained = [
            d
            for d in known
            if (parts := stem_terms(tokenize(_readable(d).lower()))) and set(parts) <= words
        ]
        if len(contained) == 1:
            return contained[0]
        ranked = self.rank(domain, limit=self.max_loaded)
        reaching = [n for n, score in ranked if score >= self.threshold]
        votes = Counter(d for n in reaching if (d := self._domain_of(n)) is not None)
        if not votes:
            return None
        best, count = votes.most_common(1)[0]
        return best if 2 * count > len(reaching) else None

    def _search(
        self,
        query: str,
        k: int,
        wanted: str | None,
        query_vector: Sequence[float] | None,
    ) -> ToolSearchResult:
        if not isinstance(query, str) or not query.strip():
            if wanted is not None:  # a domain alone is a request for its tools
                return self._domain_fallback("", wanted, [])
            return ToolSearchResult(fallback="domains", domains=self.domain_list())
        named = self.named_tools(query)
        if named:
            matches = [
                ToolMatch(n, 1.0, "name", record.domain)
                for n in named[: self.max_loaded]
                if (record := self._records.get(n)) is not None
            ]
            result = ToolSearchResult(matches=matches, fallback="name")
            rest = self._rest_of(query, named)
            if rest and len(matches) < self.max_loaded:
                # "email_send and also get the weather in Rome": the named tool, and a
                # search for the need the rest of the request states.
                other = self._search(rest, k, wanted, None)
                # Only a confident answer (or a domain named): low-confidence guesses
                # for the rest are mostly the named tool's arguments ("email_send the
                # report to Ann"), not a second need.
                if other.fallback in (None, "domain"):
                    chosen = {m.name for m in matches}
                    other.matches = [m for m in other.matches if m.name not in chosen][
                        : self.max_loaded - len(matches)
                    ]
                    if other.matches:
                        result.matches = matches + other.matches
                        result.rest, result.rest_query = other, rest
            return result
        combined, rows, lexical_only = self._combined(query, query_vector)
        # Lexical scores (the embedding model failed) are judged by the thresholds stored
        # for the lexical engine: the hybrid ones are calibrated for another scale.
        cal = _LEXICAL_CALIBRATION if lexical_only else None
        threshold = self.threshold if cal is None else cal.threshold
        candidate_threshold = self.candidate_threshold if cal is None else cal.candidate_threshold
        allowed = None
        if wanted is not None:
            allowed = np.fromiter(
                (bool(r) and (self._domain_of(r) or "").lower() == wanted for r in rows),
                dtype=bool,
                count=len(rows),
            )
        # A tool removed by another thread since the scores were read is dropped here.
        ranked = [
            (n, score)
            for n, score in self._top(combined, rows, _SIBLING_POOL + k, allowed)
            if n in self._records
        ]
        best = ranked[0][1] if ranked else -math.inf
        if best >= threshold:
            matches = self.confident_matches(ranked, k=k, threshold=threshold)
            return ToolSearchResult(matches=matches)
        if best >= candidate_threshold and best > 0:
            candidates = [
                ToolMatch(n, s, "candidate", domain)
                for n, s in ranked[: min(self.max_candidates, self.max_loaded)]
                if s > 0 and (domain := self._domain_of(n)) is not None
            ]
            return ToolSearchResult(
                matches=candidates,
                fallback="candidates",
                domains=self.domain_list(m.domain for m in candidates),
                low_confidence=True,
            )
        return self._domain_fallback(query, wanted, ranked)

    def confident_matches(
        self, ranked: Sequence[tuple[str, float]], *, k: int = 5, threshold: float | None = None
    ) -> list[ToolMatch]:
        """The confident answer for a ranking: matches, then siblings of strong domains.

        ``ranked`` is (name, score) best first; ``threshold`` defaults to the index's
        (the domain threshold is never below it). At most ``max_loaded`` tools.
        """
        cut = self.threshold if threshold is None else threshold
        strong_cut = max(self.domain_threshold, cut)
        direct = [(n, s) for n, s in ranked[: min(k, self.max_loaded)] if s >= cut]
        matches = [
            ToolMatch(n, s, "match", record.domain)
            for n, s in direct
            if (record := self._records.get(n)) is not None
        ]
        per_domain = Counter(m.domain for m in matches)
        strong = {m.domain for m in matches if m.score >= strong_cut}
        chosen = {m.name for m in matches}
        for dom in dict.fromkeys(m.domain for m in matches):
            if dom not in strong and per_domain[dom] < 2:
                continue
            if dom == _NO_DOMAIN and all(
                (r := self._records.get(m.name)) is None or r.domain_inferred
                for m in matches
                if m.domain == dom
            ):
                continue  # names of one word: no domain, so no siblings
            ranked_members = [(n, s) for n, s in ranked if self._domain_of(n) == dom]
            # Best-ranked members first; then any members: only as many as can still be
            # added are copied (a domain of an integration catalog can hold tens of
            # thousands of tools), under the lock (another thread may change the domain).
            room = min(self.max_siblings, self.max_loaded - len(matches))
            others = ((n, 0.0) for n in self._domain_members(dom, room, chosen))
            added = 0
            for name, score in itertools.chain(ranked_members, others):
                if added >= self.max_siblings or len(matches) >= self.max_loaded:
                    break
                if name in chosen or name not in self._records:
                    continue
                matches.append(ToolMatch(name, score, "sibling", dom))
                chosen.add(name)
                added += 1
        return matches

    def _domain_of(self, name: str) -> str | None:
        record = self._records.get(name)  # None: removed by another thread meanwhile
        return None if record is None else record.domain

    def _domain_fallback(
        self, query: str, wanted: str | None, ranked: list[tuple[str, float]]
    ) -> ToolSearchResult:
        domains = self.domains()
        lowered = {d.lower(): d for d in domains}
        if wanted is None:
            words = {w.strip(".:/-,;") for w in _NAME_TOKEN.findall(query.lower())}
            wanted = next((w for w in lowered if w in words), None)
        if wanted is not None and wanted in lowered:
            dom = lowered[wanted]
            members = [n for n, _ in ranked if self._domain_of(n) == dom][: self.max_loaded]
            members += self._domain_members(dom, self.max_loaded - len(members), members)
            return ToolSearchResult(
                matches=[ToolMatch(n, 0.0, "domain", dom) for n in members[: self.max_loaded]],
                fallback="domain",
            )
        return ToolSearchResult(fallback="domains", domains=self.domain_list())

    async def asearch(
        self,
        query: str,
        *,
        k: int = 5,
        domain: str | None = None,
        query_vector: Sequence[float] | None = None,
    ) -> ToolSearchResult:
        """Async twin of :meth:`search` (runs the embedding in a worker thread)."""
        import asyncio

        return await asyncio.to_thread(
            self.search, query, k=k, domain=domain, query_vector=query_vector
        )

    def tools(self, names: Sequence[str]) -> list[BaseTool]:
        """Executable tools for ``names`` (schema-only entries and unknown names skipped)."""
        found = [self._records.get(n) for n in names]
        return [r.tool for r in found if r is not None and r.tool is not None]
