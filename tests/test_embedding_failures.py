"""An embedding model that fails: every face goes on lexically and says so (fail-open).

The failing models are real ``Embeddings`` subclasses (a server that is down, a refused
key); nothing of the library is mocked.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from pathlib import Path

import pytest
from langchain.agents import create_agent
from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import MemorySaver
from langgraph.store.memory import InMemoryStore

from fakes import ScriptedChatModel, StatusError
from langgraph_librarian import (
    FileIndexStore,
    LibrarianConfig,
    LibrarianMiddleware,
    create_librarian_graph,
)
from langgraph_librarian._engine import failures
from langgraph_librarian.embeddings import load_embeddings
from langgraph_librarian.entry import IndexEntry
from langgraph_librarian.recall import ScopeMemory
from langgraph_librarian.recall._middleware import recall_report
from langgraph_librarian.recall._select import select_ranked
from langgraph_librarian.tools import ToolIndex
from langgraph_librarian.tools import index as tool_index

BUDGET = "The offsite budget is 12,000 dollars, approved by finance last week."
QUESTION = "What was the offsite budget?"


class Clock:
    """A monotonic clock the test moves (``now += seconds``)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """The clock of the warning memory and of the tool index's rejections, and a memory
    of warned causes of this test's own (causes are keyed by the model's class now)."""
    fake = Clock()
    monkeypatch.setattr(failures, "_clock", fake)
    monkeypatch.setattr(tool_index, "_clock", fake)
    monkeypatch.setattr(failures, "_WARNED", {})
    return fake


class DownEmbeddings(Embeddings):
    """An embedding server that does not answer (or answers again once ``up``)."""

    def __init__(self, error: Exception | None = None) -> None:
        self.error = error or ConnectionError("embedding server down")
        self.up = False
        self.calls = 0
        self._working = load_embeddings("static")

    def _check(self) -> None:
        self.calls += 1
        if not self.up:
            raise self.error

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self._check()
        assert self._working is not None
        return self._working.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self._check()
        assert self._working is not None
        return self._working.embed_query(text)


def _agent(state: dict) -> dict:
    return {"messages": [AIMessage(f"saw {len(state['curated_messages'])}")]}


def _turns() -> list[str]:
    chatter = [f"Chatter {i}: gardening, tomatoes and basil on the balcony. " * 6 for i in range(6)]
    return [BUDGET, *chatter, QUESTION]


def _graph(embeddings: Embeddings, **config: object):  # type: ignore[no-untyped-def]
    return create_librarian_graph(
        _agent,
        LibrarianConfig(embeddings=embeddings, always_include_recent_turns=1, **config),  # type: ignore[arg-type]
        checkpointer=MemorySaver(),
    )


def _budget_selected(result: dict) -> bool:
    return any(BUDGET in str(m.content) for m in result["curated_messages"][:-1])


@pytest.mark.parametrize("selector", [None, "llm"])
def test_graph_face_goes_on_lexically_sync(selector: str | None, caplog) -> None:
    extra = {"selector_model": ScriptedChatModel(script="IDs: [0]")} if selector else {}
    graph = _graph(DownEmbeddings(), **extra)
    cfg = {"configurable": {"thread_id": f"sync-{selector}"}}
    with caplog.at_level(logging.WARNING, logger="langgraph_librarian"):
        for text in _turns():
            result = graph.invoke({"messages": [HumanMessage(text)]}, cfg)
    meta = result["librarian_metadata"]
    assert meta["embedding_error"] == "ConnectionError: embedding server down"
    assert meta["selection_skipped"] is False and meta["selected_ids"]
    assert _budget_selected(result)
    # Indexing goes on without vectors and says so, as before.
    assert any("embedding failed" in e for e in meta.get("indexing_errors", []))
    # One warning per cause, not one per turn or per call.
    said = [r for r in caplog.records if "embedding model failed" in r.getMessage()]
    assert len(said) <= 1


@pytest.mark.parametrize("selector", [None, "llm"])
def test_graph_face_goes_on_lexically_async(selector: str | None) -> None:
    extra = {"selector_model": ScriptedChatModel(script="IDs: [0]")} if selector else {}
    graph = _graph(DownEmbeddings(TimeoutError("embedding timed out")), **extra)
    cfg = {"configurable": {"thread_id": f"async-{selector}"}}

    async def run() -> dict:
        for text in _turns():
            result = await graph.ainvoke({"messages": [HumanMessage(text)]}, cfg)
        return result

    result = asyncio.run(run())
    meta = result["librarian_metadata"]
    assert meta["embedding_error"] == "TimeoutError: embedding timed out"
    assert _budget_selected(result)


def test_a_healthy_turn_reports_no_embedding_error() -> None:
    embeddings = DownEmbeddings()
    embeddings.up = True
    graph = _graph(embeddings)
    cfg = {"configurable": {"thread_id": "healthy"}}
    for text in _turns():
        result = graph.invoke({"messages": [HumanMessage(text)]}, cfg)
    assert "embedding_error" not in result["librarian_metadata"]


def test_a_refused_key_still_raises() -> None:
    # The failure policy: what only the user can fix is never absorbed (a revoked key
    # would otherwise go unnoticed turn after turn).
    graph = _graph(DownEmbeddings(StatusError(401, "invalid api key")))
    cfg = {"configurable": {"thread_id": "refused"}}
    with pytest.raises(StatusError):
        for text in _turns():
            graph.invoke({"messages": [HumanMessage(text)]}, cfg)


def _middleware_agent(config: LibrarianConfig):  # type: ignore[no-untyped-def]
    model = ScriptedChatModel(script=lambda messages: AIMessage(f"saw {len(messages)}"))
    return create_agent(model, middleware=[LibrarianMiddleware(config)], checkpointer=MemorySaver())


def test_middleware_face_goes_on_lexically_and_says_so() -> None:
    config = LibrarianConfig(embeddings=DownEmbeddings(), always_include_recent_turns=1)
    agent = _middleware_agent(config)
    cfg = {"configurable": {"thread_id": "mw"}}
    for text in _turns():
        result = agent.invoke({"messages": [HumanMessage(text)]}, cfg)
    meta = result["librarian_metadata"]
    assert meta["embedding_error"] == "ConnectionError: embedding server down"
    assert meta["selected_ids"] and meta["curated_count"] < meta["original_count"]


class BrokenOnceStore(FileIndexStore):
    """A store whose first read fails with a bug (not a transient error)."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.broken = True

    def load(self, session_id: str) -> list[IndexEntry] | None:
        if self.broken:
            self.broken = False
            raise RuntimeError("index reader bug")
        return super().load(session_id)


def test_middleware_pass_through_reports_what_the_model_got(tmp_path: Path) -> None:
    store = BrokenOnceStore(tmp_path)
    config = LibrarianConfig(store=store, always_include_recent_turns=1)
    agent = _middleware_agent(config)
    cfg = {"configurable": {"thread_id": "mw-pass"}}
    store.broken = False
    for text in _turns()[:-1]:
        agent.invoke({"messages": [HumanMessage(text)]}, cfg)
    store.broken = True  # the next selection's read fails: everything is passed through
    result = agent.invoke({"messages": [HumanMessage(QUESTION)]}, cfg)
    n = len(result["messages"]) - 1  # the model saw the history up to its reply
    assert result["messages"][-1].content == f"saw {n}"
    meta = result["librarian_metadata"]
    assert meta["selection_skipped"] is True and meta["reason"] == "selection_failed"
    assert meta["selection_error"] == "RuntimeError: index reader bug"
    assert meta["original_count"] == meta["curated_count"] == n
    assert meta["selected_ids"] == []


def _memory(embeddings: Embeddings) -> ScopeMemory:
    memory = ScopeMemory(InMemoryStore(), config=LibrarianConfig(embeddings=embeddings))
    history = [HumanMessage(BUDGET, id="h0"), AIMessage("Noted.", id="a0")]
    for i in range(4):
        history += [HumanMessage(f"Tomatoes and basil, note {i}.", id=f"h{i + 1}")]
        history += [AIMessage("Lovely.", id=f"a{i + 1}")]
    memory.capture("user:1", history, thread_id="t1")
    return memory


def test_scoped_recall_goes_on_lexically() -> None:
    embeddings = DownEmbeddings()
    memory = _memory(embeddings)
    result = memory.recall("user:1", QUESTION)
    assert result.status == "recalled" and BUDGET in result.text
    # The result and its report say the ranking went on without the model.
    assert result.embedding_error == "ConnectionError: embedding server down"
    assert recall_report(result)["embedding_error"] == result.embedding_error
    assert BUDGET in asyncio.run(memory.arecall("user:1", QUESTION)).text
    assert memory.search("user:1", QUESTION)[0].text == BUDGET
    assert asyncio.run(memory.asearch("user:1", QUESTION))[0].text == BUDGET
    ranked = select_ranked(memory.records("user:1"), QUESTION, memory.config)
    assert ranked.embedding_error == "ConnectionError: embedding server down"


def _tools() -> list:
    @tool
    def email_send(to: str, body: str) -> str:
        """Send an email message to a recipient."""
        return "sent"

    @tool
    def weather_forecast(city: str) -> str:
        """Weather forecast for a city."""
        return "sunny"

    @tool
    def calendar_create_event(title: str, when: str) -> str:
        """Create an event in the calendar."""
        return "created"

    return [email_send, weather_forecast, calendar_create_event]


def test_tool_search_goes_on_lexically_then_recovers(tmp_path: Path) -> None:
    embeddings = DownEmbeddings()
    index = ToolIndex(_tools(), embeddings=embeddings)
    result = index.search("send an email to John")
    assert result.names[0] == "email_send"
    assert result.embedding_error == "ConnectionError: embedding server down"
    # One call per search: the model that failed on the tools is not asked for the query.
    calls = embeddings.calls
    index.search("weather in Rome")
    assert embeddings.calls == calls + 1
    assert asyncio.run(index.asearch("weather in Rome")).names[0] == "weather_forecast"
    with pytest.raises(ConnectionError):  # a file without vectors would be of no use
        index.save(tmp_path / "tools.json.gz")
    embeddings.up = True  # the server is back: the tools are embedded, hybrid again
    result = index.search("send an email to John")
    assert result.names[0] == "email_send" and result.embedding_error is None
    healthy = ToolIndex(_tools(), embeddings=embeddings)
    query = "send an email to John"
    assert index.scores(query) == pytest.approx(healthy.scores(query))


def test_tool_search_raises_a_refused_key() -> None:
    index = ToolIndex(_tools(), embeddings=DownEmbeddings(StatusError(403, "forbidden")))
    with pytest.raises(StatusError):
        index.search("send an email")


class BlipStore(FileIndexStore):
    """A store whose next read drops its connection (a transient error)."""

    blip = False

    def load(self, session_id: str) -> list[IndexEntry] | None:
        if self.blip:
            self.blip = False
            raise ConnectionError("store blip")
        return super().load(session_id)


def test_middleware_turn_keeps_its_store_error(tmp_path: Path) -> None:
    # The selection's notes (store_error, embedding_error) are recorded with the rest of
    # its metadata for after_agent; recorded before them, the middleware lost them.
    store = BlipStore(tmp_path)
    agent = _middleware_agent(LibrarianConfig(store=store, always_include_recent_turns=1))
    cfg = {"configurable": {"thread_id": "mw-blip"}}
    for text in _turns()[:-1]:
        agent.invoke({"messages": [HumanMessage(text)]}, cfg)
    store.blip = True
    meta = agent.invoke({"messages": [HumanMessage(QUESTION)]}, cfg)["librarian_metadata"]
    assert "ConnectionError: store blip" in meta["store_error"]


def test_the_turn_keeps_its_embedding_error_after_a_tool_call() -> None:
    from langchain_core.tools import tool as make_tool

    from fakes import ToolCallingScriptedModel

    @make_tool
    def lookup(x: str) -> str:
        """Look something up."""
        return "nothing found"

    def script(messages):  # type: ignore[no-untyped-def]
        last = messages[-1]
        if last.type == "human" and QUESTION in str(last.content):
            return AIMessage("", tool_calls=[{"name": "lookup", "args": {"x": "b"}, "id": "c1"}])
        return AIMessage(f"saw {len(messages)}")

    config = LibrarianConfig(embeddings=DownEmbeddings(), always_include_recent_turns=1)
    agent = create_agent(
        ToolCallingScriptedModel(script=script),
        tools=[lookup],
        middleware=[LibrarianMiddleware(config)],
        checkpointer=MemorySaver(),
    )
    run = {"configurable": {"thread_id": "tool-turn"}}
    for text in _turns():
        out = agent.invoke({"messages": [HumanMessage(text)]}, run)
    assert any(m.type == "tool" for m in out["messages"])
    assert out["librarian_metadata"]["embedding_error"] == "ConnectionError: embedding server down"


class PickyEmbeddings(Embeddings):
    """A model that rejects every batch holding a text it cannot embed (``bad`` in it),
    as a provider answers 400 for one input too long; ``error`` makes the rejection
    another kind of failure. Counts calls and the texts it was asked for."""

    def __init__(self, bad: str = "fax", error: Exception | None = None) -> None:
        self.bad = bad
        self.error = error or StatusError(400, "input rejected by the model")
        self.calls = 0
        self.asked: list[str] = []
        self._working = load_embeddings("static")

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        self.asked += texts
        if any(self.bad in text.lower() for text in texts):
            raise self.error
        assert self._working is not None
        return self._working.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.calls += 1
        assert self._working is not None
        return self._working.embed_query(text)


def _more_tools() -> list:
    @tool
    def fax_send(number: str, document: str) -> str:
        """Send a fax of a document to a fax number."""
        return "faxed"

    @tool
    def files_upload(path: str) -> str:
        """Upload a file to the shared drive."""
        return "uploaded"

    @tool
    def notes_add(text: str) -> str:
        """Add a note to the notebook."""
        return "noted"

    return [*_tools(), fax_send, files_upload, notes_add]


def test_a_tool_the_model_rejects_leaves_the_others_embedded(
    caplog: pytest.LogCaptureFixture, clock: Clock
) -> None:
    # One tool whose text the model rejects (HTTP 400: a permanent failure) made the whole
    # batch fail, and the whole index stayed lexical. The batch is split until only the
    # rejected tool is left without a vector.
    embeddings = PickyEmbeddings()
    index = ToolIndex(_more_tools(), embeddings=embeddings)
    with caplog.at_level(logging.WARNING, logger="langgraph_librarian"):
        result = index.search("send an email to John")
        assert result.names[0] == "email_send"
        assert result.embedding_error is None  # hybrid: the model answers
        # One failure may be a hiccup: the tool is asked again, alone, by the next search,
        # and rejected when it fails again.
        assert result.embedding_rejected == {} and "fax_send" not in caplog.text
        asked = len(embeddings.asked)
        result = index.search("send an email to John")
    # fax_send alone, then a tool embedded before (the model works: the failure is fax's)
    assert [t.split(":")[0] for t in embeddings.asked[asked:]] == ["fax send", "email send"]
    rejected = {"fax_send": "StatusError: input rejected by the model"}
    assert result.embedding_rejected == rejected
    assert index.embedding_rejected == rejected
    assert "fax_send" in caplog.text
    # Every other tool scores as in an index whose model embeds them all.
    healthy = ToolIndex(_more_tools(), embeddings=PickyEmbeddings(bad="never"))
    scores, expected = index.scores("upload the report"), healthy.scores("upload the report")
    del scores["fax_send"], expected["fax_send"]
    assert scores == pytest.approx(expected)
    # The rejected tool is still found, by its words; the model is not asked for it again
    # for a while.
    asked = len(embeddings.asked)
    clock.now += tool_index._REJECT_WAIT - 1
    assert "fax_send" in index.search("send a fax to the office").names
    assert embeddings.asked[asked:] == [] and embeddings.calls > 0
    # Replaced by a tool the model accepts, it gets a vector.
    embeddings.bad = "never"
    index.add(_more_tools()[3])
    assert index.search("send a fax").embedding_rejected == {}
    cosine, _ = index.score_parts("send a fax")
    assert cosine[index.row_names().index("fax_send")] > 0.3
    assert index.search("send a fax").names[0] == "fax_send"


def test_a_rejected_tool_is_asked_again_now_and_then(clock: Clock) -> None:
    # A tool the model rejects was never asked again (a model or a limit that changed
    # left it without a vector for good). It is asked again, alone, one call each time,
    # after 10 minutes, then twice as long after each rejection.
    embeddings = PickyEmbeddings()
    index = ToolIndex(_more_tools(), embeddings=embeddings)
    index.search("send an email")
    index.search("send an email")
    assert list(index.embedding_rejected) == ["fax_send"]
    waits = []
    for _ in range(3):
        asked, calls, waited = len(embeddings.asked), embeddings.calls, 0.0
        while len(embeddings.asked) == asked and waited < 10_000:
            clock.now += 60
            waited += 60
            index.search("send an email")
        assert [t.split(":")[0] for t in embeddings.asked[asked:]] == ["fax send"]
        assert embeddings.calls - calls == waited // 60 + 1  # the queries, and one call
        waits.append(waited)
    assert waits == [600, 1200, 2400]
    assert list(index.embedding_rejected) == ["fax_send"]
    embeddings.bad = "never"  # the model takes it now
    clock.now += 4800
    result = index.search("send a fax")
    assert result.embedding_rejected == {} and result.names[0] == "fax_send"
    cosine, _ = index.score_parts("send a fax")
    assert cosine[index.row_names().index("fax_send")] > 0.3


def test_a_server_error_rejects_no_tool() -> None:
    # An intermittent HTTP 500 (kind "failure" for the retry policy) split the batch, and
    # the tool whose part met the 500 was rejected for good although the model embeds it.
    # A 5xx says nothing of one text: the batch is retried by the next search.
    class Flaky(PickyEmbeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            if self.calls % 2 == 0:
                self.calls += 1
                raise StatusError(500, "internal server error")
            return super().embed_documents(texts)

    embeddings = Flaky(bad="never")
    index = ToolIndex(_more_tools(), embeddings=embeddings)
    result = index.search("send an email")
    assert result.embedding_error == "StatusError: internal server error"
    assert embeddings.calls == 1  # not split
    for _ in range(3):
        result = index.search("send an email")
    assert result.embedding_error is None and result.embedding_rejected == {}
    cosine, _ = index.score_parts("send a fax")
    assert cosine[index.row_names().index("fax_send")] > 0.3


def test_a_tool_rejected_once_is_not_rejected() -> None:
    # A text that fails once on its own (a hiccup of the server) is asked again by the
    # next search; embedded then, it was never rejected.
    class Once(PickyEmbeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            try:
                return super().embed_documents(texts)
            finally:
                if len(texts) == 1 and self.bad in texts[0].lower():
                    self.bad = "never"  # failed alone once: the next time, it goes through

    embeddings = Once()
    index = ToolIndex(_more_tools(), embeddings=embeddings)
    index.search("send an email")
    result = index.search("send a fax")
    assert result.embedding_rejected == {} and result.embedding_error is None
    cosine, _ = index.score_parts("send a fax")
    assert cosine[index.row_names().index("fax_send")] > 0.3


def test_a_tool_added_later_that_the_model_rejects() -> None:
    # A batch of one: whether the model rejects the tool or fails for everything is told
    # by asking it for a tool it embedded before.
    embeddings = PickyEmbeddings()
    index = ToolIndex(_tools(), embeddings=embeddings)
    assert index.search("weather in Rome").names[0] == "weather_forecast"
    index.add(_more_tools()[3])
    index.search("send an email")
    result = index.search("send an email")
    assert result.embedding_error is None and list(result.embedding_rejected) == ["fax_send"]
    assert result.names[0] == "email_send"


def test_a_transient_failure_is_not_split_but_retried() -> None:
    # A timeout says nothing of any one tool: the batch is not split (that would only
    # multiply the timeouts), the search is lexical and the tools are retried later.
    embeddings = PickyEmbeddings(error=TimeoutError("embedding timed out"))
    index = ToolIndex(_more_tools(), embeddings=embeddings)
    result = index.search("send an email to John")
    assert result.embedding_error == "TimeoutError: embedding timed out"
    assert result.embedding_rejected == {}
    assert embeddings.calls == 1
    embeddings.bad = "never"  # the server answers again: every tool is embedded
    result = index.search("send an email to John")
    assert result.embedding_error is None and result.embedding_rejected == {}


def test_a_model_that_fails_every_text_is_down_not_rejecting() -> None:
    # A permanent failure for every text (a broken local model) is the model failing, not
    # each tool rejected: the search is lexical, nothing is marked rejected, and the next
    # search asks the model once, not once per split.
    embeddings = PickyEmbeddings(bad="", error=ValueError("model is broken"))
    index = ToolIndex(_more_tools(), embeddings=embeddings)
    result = index.search("send an email to John")
    assert result.embedding_error == "ValueError: model is broken"
    assert result.embedding_rejected == {} and result.names[0] == "email_send"
    calls = embeddings.calls
    index.search("weather in Rome")
    assert embeddings.calls == calls + 1
    embeddings.bad = "never"
    assert index.search("weather in Rome").embedding_error is None


def test_a_rejected_tool_is_saved_without_a_vector_and_rejected_again_on_load(
    tmp_path: Path,
) -> None:
    index = ToolIndex(_more_tools(), embeddings=PickyEmbeddings())
    index.search("send a fax")
    path = tmp_path / "tools.json.gz"
    index.save(path)  # the model works: the rejected tool does not make save raise
    assert list(index.embedding_rejected) == ["fax_send"]
    embeddings = PickyEmbeddings()
    loaded = ToolIndex.load(path, _more_tools(), embeddings=embeddings)
    loaded.search("send a fax")
    assert list(loaded.embedding_rejected) == ["fax_send"]
    assert loaded._reused > 0  # the others took their saved vectors
    result = loaded.search("upload the report")
    assert result.names[0] == "files_upload" and result.embedding_error is None
    with pytest.raises(ValueError):  # a model that fails for every text still raises
        ToolIndex.load(path, _more_tools(), embeddings=PickyEmbeddings("", ValueError("broken")))


def _outage_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and "the embedding model failed" in r.getMessage()
    ]


def test_an_outage_after_a_recovery_is_warned_again(
    caplog: pytest.LogCaptureFixture, clock: Clock
) -> None:
    # The warning is said once per cause while the model is down; an answer of the model
    # after the cause stopped for a while ends the outage, so the next one is warned
    # again (it was silent for good before).
    error = ConnectionError(f"embedding server down ({uuid.uuid4()})")
    embeddings = DownEmbeddings(error)
    index = ToolIndex(_tools(), embeddings=embeddings)
    memory = _memory(embeddings)
    with caplog.at_level(logging.INFO, logger="langgraph_librarian"):
        for _ in range(3):
            assert index.search("send an email").embedding_error
            assert memory.search("user:1", QUESTION)[0].text == BUDGET
        assert len(_outage_warnings(caplog)) == 1  # no flood while it lasts
        clock.now += failures._QUIET
        embeddings.up = True
        assert index.search("send an email").embedding_error is None
        embeddings.up = False
        for _ in range(3):
            index.search("weather in Rome")
        assert len(_outage_warnings(caplog)) == 2
        assert "the embedding model answers again" in caplog.text  # at INFO
        # The selector's faces (sync and async) re-arm it too.
        clock.now += failures._QUIET
        embeddings.up = True
        memory.search("user:1", QUESTION)
        embeddings.up = False
        memory.search("user:1", QUESTION)
        assert len(_outage_warnings(caplog)) == 3
        clock.now += failures._QUIET
        embeddings.up = True
        asyncio.run(memory.asearch("user:1", QUESTION))
        embeddings.up = False
        asyncio.run(memory.asearch("user:1", QUESTION))
        assert len(_outage_warnings(caplog)) == 4


def test_another_model_answering_does_not_rearm_the_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A tool index whose model is down and a selector whose model answers: the answers
    # of the one are no recovery of the other (that would warn at every turn).
    down = DownEmbeddings(ConnectionError(f"tool embeddings down ({uuid.uuid4()})"))
    index = ToolIndex(_tools(), embeddings=down)
    memory = _memory(load_embeddings("static"))  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING, logger="langgraph_librarian"):
        for _ in range(3):
            index.search("send an email")
            memory.search("user:1", QUESTION)
    assert len(_outage_warnings(caplog)) == 1


def test_a_lone_rejected_tool_does_not_block_the_tools_added_after_it() -> None:
    # A first tool the model rejects cannot be told from a model that fails (nothing
    # answered yet): the index is lexical. Tools added later make a new batch, split
    # again: they are embedded and the first is found rejected.
    embeddings = PickyEmbeddings()
    index = ToolIndex([_more_tools()[3]], embeddings=embeddings)
    assert index.search("send a fax").embedding_error is not None
    calls = embeddings.calls
    index.search("send a fax")
    assert embeddings.calls == calls + 1  # the same batch is not split again
    index.add(_tools())
    index.search("send an email to John")
    result = index.search("send an email to John")
    assert result.embedding_error is None and list(result.embedding_rejected) == ["fax_send"]
    assert result.names[0] == "email_send"


def test_one_outage_is_warned_once_whatever_the_object(caplog: pytest.LogCaptureFixture) -> None:
    # The warning was kept per object (its id): an app that builds its embeddings object
    # per request warned the same outage at every request. It is kept per model (class
    # and settings): models of other settings are warned on their own.
    class Hosted(DownEmbeddings):
        def __init__(self, model: str) -> None:
            super().__init__()
            self.model = model

    with caplog.at_level(logging.WARNING, logger="langgraph_librarian"):
        for _ in range(20):
            ToolIndex(_tools(), embeddings=DownEmbeddings()).search("send an email")
        assert len(_outage_warnings(caplog)) == 1
        for name in ("small", "large", "small"):
            ToolIndex(_tools(), embeddings=Hosted(name)).search("send an email")
    assert len(_outage_warnings(caplog)) == 3
    assert failures.model_key(Hosted("small")).endswith("Hosted model=small")


def test_a_request_id_in_the_message_is_one_cause(caplog: pytest.LogCaptureFixture) -> None:
    # Providers put a request id in their messages: each was a new cause (warned again),
    # and a batch failing for every text was split again at every search.
    class Broken(PickyEmbeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            self.error = ValueError(f"model is broken (request req_{uuid.uuid4().hex})")
            return super().embed_documents(texts)

    embeddings = Broken(bad="")
    index = ToolIndex(_more_tools(), embeddings=embeddings)
    with caplog.at_level(logging.WARNING, logger="langgraph_librarian"):
        index.search("send an email")
        calls = embeddings.calls
        index.search("weather in Rome")
        assert embeddings.calls == calls + 1  # the same batch, the same cause: not split
        index.search("weather in Rome")
    assert len(_outage_warnings(caplog)) == 1


def test_a_failure_that_goes_on_is_not_ended_by_answers_to_another(
    caplog: pytest.LogCaptureFixture, clock: Clock
) -> None:
    # One model shared by a tool index it keeps failing for (a lone tool it rejects) and
    # one it answers: every answer ended the outage, so each turn logged it again (a
    # WARNING and an INFO per turn). An answer ends it only once the cause has not been
    # seen for a while.
    embeddings = PickyEmbeddings()
    failing = ToolIndex([_more_tools()[3]], embeddings=embeddings)
    answered = ToolIndex(_tools(), embeddings=embeddings)
    with caplog.at_level(logging.INFO, logger="langgraph_librarian"):
        for _ in range(10):
            clock.now += 5
            assert failing.search("send a fax").embedding_error
            assert answered.search("send an email").embedding_error is None
        assert len(_outage_warnings(caplog)) == 1
        assert "answers again" not in caplog.text
        clock.now += failures._QUIET  # the failing one is gone quiet: the outage is over
        answered.search("send an email")
        assert "answers again" in caplog.text
        failing.search("send a fax")
    assert len(_outage_warnings(caplog)) == 2


def test_two_concurrent_first_searches_strike_a_tool_once() -> None:
    # Two searches syncing at once during one 400 episode embed the same pending tools;
    # the failure is one strike, not two (two would reject a healthy tool).
    import contextlib
    import threading

    class Together(PickyEmbeddings):
        def __init__(self) -> None:
            super().__init__()
            self.meet = threading.Barrier(2, timeout=5)
            self.met = False

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            if not self.met:
                with contextlib.suppress(threading.BrokenBarrierError):
                    self.meet.wait()  # both syncs hold the same batch here
                self.met = True
            return super().embed_documents(texts)

    embeddings = Together()
    index = ToolIndex(_more_tools(), embeddings=embeddings)
    threads = [threading.Thread(target=index.search, args=("send an email",)) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert index.embedding_rejected == {}
    embeddings.bad = "never"  # the episode is over
    result = index.search("send a fax")
    assert result.embedding_rejected == {} and result.embedding_error is None
