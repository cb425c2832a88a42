"""Configuration of the Librarian pipeline."""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeAlias, cast

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore

from langgraph_librarian._engine.calls import CallPolicy
from langgraph_librarian._engine.models import build_model, check_model_spec
from langgraph_librarian.embeddings import check_embeddings
from langgraph_librarian.select._ladder import OUTPUT_MODES, OutputMode
from langgraph_librarian.select.prompts import template_placeholders
from langgraph_librarian.select.result import Selector
from langgraph_librarian.stores.base import BaseIndexStore
from langgraph_librarian.stores.base import session_key as session_key  # kept importable here
from langgraph_librarian.stores.base import thread_text as thread_text  # kept importable here
from langgraph_librarian.stores.langgraph_store import LangGraphIndexStore
from langgraph_librarian.tokens import TokenCounter

__all__ = ["LOCAL", "LibrarianConfig"]

AUTO_BUDGET_SHARE: Final = 0.07
AUTO_BUDGET_MIN: Final = 2_000
AUTO_BUDGET_MAX: Final = 8_000


def auto_budget(history_tokens: int) -> int:
    """The ``"auto"`` context budget: 7% of the history, within 2,000..8,000 tokens."""
    share = round(AUTO_BUDGET_SHARE * history_tokens)
    return max(AUTO_BUDGET_MIN, min(AUTO_BUDGET_MAX, share))


LOCAL: Final = "local"
"""Pass as ``indexer_model`` or ``selector_model`` to force the offline engine for that step."""

ModelLike = BaseChatModel | str | None


_INT_FIELDS = (
    "always_include_recent_turns",
    "short_message_threshold",
    "max_concurrency",
    "max_retries",
    "selector_token_budget",
    "max_selected",
    "running_summary_tokens",
)
_NUMBER_FIELDS = ("model_timeout", "retry_backoff", "selection_timeout")
_OPTIONAL_FIELDS = frozenset({"running_summary_tokens", "model_timeout", "selection_timeout"})
_FLAG_FIELDS = ("background_indexing", "selector_keeps_local")


@dataclass
class LibrarianConfig:
    """Controls the Librarian pipeline.

    With no model at all (``LibrarianConfig()``) the offline engine does everything:
    extractive summaries and hybrid lexical/embedding selection. Give
    ``indexer_model`` and/or ``selector_model`` (a chat model or a ``"provider:model"``
    string for ``init_chat_model``) to use an LLM for that step; ``"local"`` forces the
    offline engine for one step while the other uses a model.

    Attributes:
        indexer_model: Summarizes messages into index entries. ``None``: extractive.
        selector_model: Picks relevant entries. ``None``: falls back to
            ``indexer_model``, or to the local selector when neither is set.
        always_include_recent_turns: Whole user turns always kept at the end.
        short_message_threshold: Messages shorter than this many characters are
            indexed verbatim without a model call.
        summary_prompt: Replaces the default summarization instructions.
        selection_prompt: Replaces the selection template; must contain ``{query}``
            and ``{index}``.
        store: External index store; the index is loaded from and saved to it, keyed
            by the thread id (which is then required). A LangGraph ``BaseStore``
            (``InMemoryStore``, ``SqliteStore``, ``PostgresStore``...) is wrapped in
            :class:`~langgraph_librarian.stores.LangGraphIndexStore`. ``None``: the index
            lives in graph state.
        max_concurrency: Model calls in flight at once while indexing.
        model_timeout: Seconds before a single model call (one attempt) is abandoned;
            also the client timeout of models built from ``"provider:model"`` strings.
        max_retries: Extra attempts after a transient failure (timeout, dropped
            connection, rate limit); authentication and validation errors are final.
        retry_backoff: Seconds before the first retry (doubles each retry, with jitter).
        selection_timeout: Seconds the LLM selector may spend in one turn, all output
            forms and retries included; past it the local selector answers.
            ``None``: bounded only by ``model_timeout`` and ``max_retries``.
        selector_output: How the selector model is asked to answer: ``"auto"`` tries
            structured output, then JSON mode, then a plain ``IDs: [...]`` line, and
            remembers what works; or one fixed form (``"structured"``, ``"json_mode"``,
            ``"text"``).
        selector_token_budget: Upper bound on the selection prompt; larger indexes
            are shortlisted by the local ranker first.
        selector_keeps_local: Keep the offline engine's selection next to the LLM
            selector's, within the same budget: the model's picks that the offline
            engine also made come first, then the rest of the offline selection, then
            the model's other picks. A weak model's wrong picks then cannot push out
            what the offline engine is sure of. ``False``: the model's picks alone.
        context_token_budget: Bound on the curated context. ``"auto"`` (default): 7%
            of the whole history, at least 2,000 and at most 8,000 tokens (see
            :meth:`budget_for`). An int: that many tokens. ``None``: unbounded (every
            selected message, all recent turns). Within the budget the current turn is
            always kept, earlier recent turns take at most about a third (long ones
            shortened to their summaries), and the selection fills the rest.
        token_counter: Your model's message token counter; default approximate.
        embeddings: LangChain embeddings for the local selector. ``"auto"``: the
            model named by ``LIBRARIAN_EMBEDDINGS``, else the packaged static model
            (distilled from all-MiniLM-L6-v2, no download); another packaged model by
            name (``"static"``, ``"minilm"``, ``"e5-small"``..., as
            ``LIBRARIAN_EMBEDDINGS`` takes); ``None``: lexical only.
            Vectors are computed once, at index time.
        max_selected: Most messages the local selector returns for one query.
        background_indexing: ``index_messages`` hands indexing to a worker thread and
            returns at once (needs ``store``: the index lands there when done; until
            then new messages get provisional entries at selection time).
        selector: Your own :class:`~langgraph_librarian.select.Selector`; replaces the
            one built from ``selector_model`` (hydration, budgets and fail-open stay).
        running_summary_tokens: Also start the curated context with a running summary
            (at most this many tokens) of the conversation older than the recent turns:
            the gist, next to the selected details. Kept in state
            (``librarian_summary``), never in ``messages``; updated after each reply by
            the indexer model, or offline. ``None``: no summary.
        store_timeout: Seconds one read or write of the index store may take (a store
            that stopped answering: a network partition, a stuck database); past it
            the turn goes on without the stored index, ``store_error`` says so, and
            the turn's later store calls do not wait again. ``None``: no limit.
    """

    indexer_model: ModelLike = None
    selector_model: ModelLike = None
    always_include_recent_turns: int = 2
    short_message_threshold: int = 200
    summary_prompt: str | None = None
    selection_prompt: str | None = None
    store: BaseIndexStore | BaseStore | None = None
    max_concurrency: int = 16
    model_timeout: float | None = 60.0
    max_retries: int = 2
    retry_backoff: float = 0.5
    selector_token_budget: int = 8000
    context_token_budget: int | Literal["auto"] | None = "auto"
    token_counter: TokenCounter | None = None
    embeddings: Embeddings | str | None = "auto"
    max_selected: int = 16
    background_indexing: bool = False
    selection_timeout: float | None = 60.0
    selector_output: OutputMode = "auto"
    selector_keeps_local: bool = True
    running_summary_tokens: int | None = None
    selector: Selector | None = None
    store_timeout: float | None = 5.0
    _models: dict[str, BaseChatModel] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def _check_types(self) -> None:
        """Numbers and flags of the right type, or a ``TypeError`` naming the field.

        Values often come from JSON or environment strings (``configurable`` in
        LangGraph Server): ``"3"`` or ``2.5`` for a count would otherwise fail mid-turn,
        far from their cause.
        """
        for name in _INT_FIELDS:
            value = getattr(self, name)
            if value is None and name in _OPTIONAL_FIELDS:
                continue
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
            setattr(self, name, int(value))
        for name in _NUMBER_FIELDS:
            value = getattr(self, name)
            if value is None and name in _OPTIONAL_FIELDS:
                continue
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
        for name in _FLAG_FIELDS:
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise TypeError(f"{name} must be True or False, got {type(value).__name__}")
        for name in ("summary_prompt", "selection_prompt"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise TypeError(
                    f"{name} must be a string or None, got {type(value).__name__} {value!r:.60}"
                )
        if self.token_counter is not None and not callable(self.token_counter):
            raise TypeError(
                "token_counter must be a function of a message list returning an int "
                f"(e.g. model.get_num_tokens_from_messages) or None, got "
                f"{type(self.token_counter).__name__} {self.token_counter!r:.60}"
            )

    def __post_init__(self) -> None:
        self._check_types()
        check_embeddings(self.embeddings)
        checks: list[tuple[bool, str]] = [
            (self.always_include_recent_turns >= 0, "always_include_recent_turns must be >= 0"),
            (self.short_message_threshold >= 0, "short_message_threshold must be >= 0"),
            (self.max_concurrency >= 1, "max_concurrency must be >= 1"),
            (self.max_retries >= 0, "max_retries must be >= 0"),
            (self.retry_backoff >= 0, "retry_backoff must be >= 0"),
            (self.selector_token_budget >= 256, "selector_token_budget must be >= 256"),
            (self.max_selected >= 1, "max_selected must be >= 1"),
            (
                self.model_timeout is None or self.model_timeout > 0,
                "model_timeout must be > 0 or None",
            ),
            (
                self.context_token_budget in (None, "auto")
                or (
                    isinstance(self.context_token_budget, int)
                    and not isinstance(self.context_token_budget, bool)
                    and self.context_token_budget > 0
                ),
                "context_token_budget must be a positive int, 'auto' or None",
            ),
            (
                self.selection_timeout is None or self.selection_timeout > 0,
                "selection_timeout must be > 0 or None",
            ),
            (
                self.running_summary_tokens is None or self.running_summary_tokens >= 16,
                "running_summary_tokens must be >= 16 or None",
            ),
            (
                self.selector_output in OUTPUT_MODES,
                f"selector_output must be one of {', '.join(OUTPUT_MODES)}",
            ),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(message)
        if self.selection_prompt is not None:
            found = template_placeholders(self.selection_prompt)
            if found != {"query", "index"}:
                raise ValueError("selection_prompt must contain both {query} and {index}")
        for slot in ("indexer_model", "selector_model"):
            value = getattr(self, slot)
            if isinstance(value, str) and value != LOCAL:
                check_model_spec(value, slot)
            elif value is not None and not isinstance(value, str | BaseChatModel):
                raise TypeError(f"{slot} must be a chat model, a 'provider:model' string or None")
        if isinstance(self.store, BaseStore):
            self.store = LangGraphIndexStore(self.store)
        if self.store is not None and not isinstance(self.store, BaseIndexStore):
            raise TypeError("store must implement load/save/delete (BaseIndexStore)")
        if self.selector is not None and not isinstance(self.selector, Selector):
            raise TypeError("selector must have select() and aselect() (see Selector)")
        if self.store_timeout is not None:
            if isinstance(self.store_timeout, bool) or not isinstance(
                self.store_timeout, numbers.Real
            ):
                raise TypeError(f"store_timeout must be a number, got {self.store_timeout!r}")
            if not self.store_timeout > 0:
                raise ValueError("store_timeout must be > 0 or None")
        if self.background_indexing and self.store is None:
            raise ValueError(
                "background_indexing needs a store in the config itself, "
                "LibrarianConfig(store=..., background_indexing=True) (create_librarian_graph's "
                "store= alone does not reach it): graph state can only change while a node runs"
            )

    # -- budget ---------------------------------------------------------------------

    @property
    def index_store(self) -> BaseIndexStore | None:
        """``store`` as the index store it became: a LangGraph ``BaseStore`` passed as
        ``store`` is wrapped in a :class:`LangGraphIndexStore` when the config is built."""
        return cast("BaseIndexStore | None", self.store)

    def budget_for(self, history_tokens: int) -> int | None:
        """The curated-context budget for a history of ``history_tokens`` tokens.

        With ``"auto"``: 7% of the history, within 2,000..8,000 tokens. A long chat
        then costs a small, bounded share of sending everything, and a short one is
        not squeezed below what a few turns and a few selected messages need.

        Example:
            >>> LibrarianConfig().budget_for(60_000)
            4200
            >>> LibrarianConfig(context_token_budget=None).budget_for(60_000) is None
            True
        """
        if self.context_token_budget == "auto":
            return auto_budget(history_tokens)
        return self.context_token_budget

    # -- models ---------------------------------------------------------------------

    def _model(self, slot: str, value: BaseChatModel | str) -> BaseChatModel:
        if isinstance(value, BaseChatModel):
            return value
        if slot not in self._models:
            self._models[slot] = build_model(value, slot, timeout=self.model_timeout)
        return self._models[slot]

    @property
    def uses_local_indexer(self) -> bool:
        """True when summaries come from the offline extractive indexer."""
        return self.indexer_model is None or self.indexer_model == LOCAL

    @property
    def uses_local_selector(self) -> bool:
        """True when selection runs on the offline engine."""
        if self.selector_model == LOCAL:
            return True
        return self.selector_model is None and self.uses_local_indexer

    @property
    def call_policy(self) -> CallPolicy:
        """``model_timeout``, ``max_retries`` and ``retry_backoff`` as one value: the policy
        of every model call the Librarian makes for itself (indexer, selector, summary)."""
        return CallPolicy(self.model_timeout, self.max_retries, self.retry_backoff)

    def get_indexer_model(self) -> BaseChatModel:
        """The indexer chat model.

        Raises:
            ValueError: when no indexer model is configured (the offline indexer runs).
        """
        if self.uses_local_indexer or self.indexer_model is None:
            raise ValueError("no indexer_model configured (the offline indexer is in use)")
        return self._model("indexer_model", self.indexer_model)

    def get_selector_model(self) -> BaseChatModel:
        """The selector chat model, falling back to the indexer model.

        Raises:
            ValueError: when selection runs on the offline engine.
        """
        if self.uses_local_selector:
            raise ValueError("no selector_model configured (the local selector is in use)")
        if self.selector_model is not None and self.selector_model != LOCAL:
            return self._model("selector_model", self.selector_model)
        return self.get_indexer_model()


def _check_fields(fields: Mapping[str, Any], where: str) -> None:
    names = {f.name for f in dataclasses.fields(LibrarianConfig) if f.init}
    unknown = sorted(set(fields) - names)
    if unknown:
        raise ValueError(f"unknown LibrarianConfig fields {where}: {unknown}")


ConfigLike: TypeAlias = LibrarianConfig | Mapping[str, Any] | None
"""What a face accepts as its ``config``: a :class:`LibrarianConfig`, a dict of its fields
(as ``configurable["librarian"]`` accepts one) or ``None`` (the defaults)."""


def as_config(value: ConfigLike, where: str = "config") -> LibrarianConfig | None:
    """A face's ``config`` argument as a :class:`LibrarianConfig` (``None`` stays ``None``).

    A dict becomes ``LibrarianConfig(**value)``, checked now: an unknown field or a bad
    value raises here, when the graph is built, not after the agent has replied.

    Raises:
        ValueError: an unknown field or a bad value.
        TypeError: anything else than a LibrarianConfig, a dict or None.
    """
    if value is None or isinstance(value, LibrarianConfig):
        return value
    if isinstance(value, Mapping):
        _check_fields(value, f"in {where}")
        return LibrarianConfig(**value)
    raise TypeError(
        f"{where} must be a LibrarianConfig, a dict of its fields or None, "
        f"got {type(value).__name__}"
    )


def resolve_config(
    default: LibrarianConfig | None, runnable_config: RunnableConfig | None
) -> LibrarianConfig:
    """The config in force for one call.

    ``configurable["librarian"]`` wins over ``default``: a :class:`LibrarianConfig`
    replaces it, a dict overrides individual fields of it.
    """
    base = default if default is not None else LibrarianConfig()
    configurable: dict[str, Any] = dict((runnable_config or {}).get("configurable") or {})
    override = configurable.get("librarian")
    if override is None:
        return base
    if isinstance(override, LibrarianConfig):
        return override
    if isinstance(override, dict):
        _check_fields(override, "in configurable")
        return dataclasses.replace(base, **override)
    raise TypeError(
        "configurable['librarian'] must be a LibrarianConfig or a dict, "
        f"got {type(override).__name__}"
    )


def session_id_from_config(runnable_config: RunnableConfig | None) -> str | None:
    """The session an external store keys the index by: the thread id (or a
    ``session_id``) from ``configurable``, as :func:`thread_text` reads it; ``None``
    when there is none or it is empty."""
    configurable = (runnable_config or {}).get("configurable") or {}
    for key in ("thread_id", "session_id"):
        found = thread_text(configurable.get(key))
        if found:
            return found
    return None


def graph_namespace(runnable_config: RunnableConfig | None) -> str:
    """The (sub)graph a node runs in: ``""`` for the top-level graph, else the names of
    the parent nodes (``"agent"``, ``"team|agent"``).

    A node's ``checkpoint_ns`` is ``parent:<task id>|...|node:<task id>``; the graph levels
    among those parents are the ones with a checkpoint of their own in LangGraph's
    ``checkpoint_map`` (a functional API ``@task`` runs under its entrypoint's namespace
    with the entrypoint's checkpoint: not a graph of its own, so selection in the
    entrypoint and indexing in a task share one key). Task ids change every step and are
    dropped, so every node of one subgraph gets the same name, turn after turn.
    """
    configurable = (runnable_config or {}).get("configurable") or {}
    namespace = str(configurable.get("checkpoint_ns") or "")
    parents = namespace.split("|")[:-1] if namespace else []  # the last part: this node
    levels = configurable.get("checkpoint_map")
    if isinstance(levels, dict) and levels:
        # Only this node's ancestors count (a map handed back by get_state(subgraphs=True)
        # can carry other branches' levels), and a level is an ancestor whose checkpoint
        # differs from its parent level's (a task nested in an entrypoint subgraph has
        # the entrypoint's checkpoint).
        deepest, parent = "", levels.get("")
        for k in range(1, len(parents) + 1):
            prefix = "|".join(parents[:k])
            key = prefix if prefix in levels else "|".join(_names(parents[:k]))
            if key in levels and levels[key] != parent:
                deepest, parent = prefix, levels[key]
    else:  # no checkpointer: every parent is a graph level
        deepest = "|".join(parents)
    return "|".join(_names(deepest.split("|"))) if deepest else ""


def _names(parts: list[str]) -> list[str]:
    """Namespace parts without their task ids (LangGraph writes ``name:<task id>``)."""
    return [part.split(":", 1)[0] for part in parts]


def index_session(thread: str, runnable_config: RunnableConfig | None) -> str:
    """Key of a thread's index in a shared store: the thread id, followed by the subgraph
    it runs in when it is not the top-level graph (two Librarian agents in one thread,
    e.g. a supervisor's sub-agents, each keep their own index); see :func:`session_key`."""
    return session_key(thread, graph_namespace(runnable_config))
