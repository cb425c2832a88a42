"""The tool librarian: index, request_tools, create_agent middleware, StateGraph variant."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from fakes import ToolCallingScriptedModel
from langgraph_librarian.errors import ConfigurationError
from langgraph_librarian.tools import ToolIndex, ToolLibrarianMiddleware, ToolLibrarianStateFields
from langgraph_librarian.tools.index import infer_domain
from langgraph_librarian.tools.request_tools import merge_loaded_tools

SENT: list[dict[str, Any]] = []


@tool
def email_send(to: str, body: str) -> str:
    """Send an email message to a recipient."""
    SENT.append({"to": to, "body": body})
    return f"email to {to} sent"


@tool
def email_read(folder: str = "inbox") -> str:
    """Read the latest emails in a mailbox folder."""
    return "3 unread"


@tool
def github_create_issue(repo: str, title: str) -> str:
    """Open a new issue in a GitHub repository."""
    return "issue #1"


@tool
def github_list_pulls(repo: str) -> str:
    """List open pull requests of a GitHub repository."""
    return "2 open"


@tool
def calendar_create_event(title: str, when: str) -> str:
    """Create a calendar event at a given time."""
    return "event created"


@tool
def memory_note(text: str) -> str:
    """Write a note to the agent's memory (a core tool)."""
    return "noted"


CATALOG = [email_send, email_read, github_create_issue, github_list_pulls, calendar_create_event]


def lexical_index() -> ToolIndex:
    return ToolIndex(CATALOG, embeddings=None)


class CountingEmbeddings(Embeddings):
    """Bag-of-letters vectors; records every text embedded."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def _vec(self, text: str) -> list[float]:
        counts = [0.0] * 26
        for ch in text.lower():
            if "a" <= ch <= "z":
                counts[ord(ch) - 97] += 1
        return counts

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.seen.extend(texts)
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text)


# -- ToolIndex -----------------------------------------------------------------------


def test_domain_inference():
    assert infer_domain("email_send") == "email"
    assert infer_domain("github.create_issue") == "github"
    assert infer_domain("search") == "general"
    # Verb-first names (the common LangChain style): the object is the domain, so
    # get_weather and get_stock_price are not "related" through "get".
    assert infer_domain("createEvent") == "event"
    assert infer_domain("get_weather") == infer_domain("get_current_weather") == "weather"
    assert infer_domain("get_flight_status") == infer_domain("cancel_flight") == "flight"
    assert infer_domain("list_issues") == infer_domain("create_issue") == "issue"
    assert infer_domain("book_search") == "book"  # "book" is as often a noun
    assert infer_domain("news_read") == "news" and infer_domain("status_get") == "status"
    # A name's own head is kept as it is; only a verb's object is made singular.
    assert infer_domain("kubernetes_list_pods") == "kubernetes"
    assert infer_domain("sales_report") == "sales"
    assert infer_domain("list_policies") == infer_domain("create_policy") == "policy"
    assert infer_domain("get_movies") == "movie" and infer_domain("get_series") == "series"
    assert infer_domain("list_messages") == infer_domain("send_message") == "message"


def test_lexical_search_and_sibling_expansion():
    result = lexical_index().search("open a GitHub issue in a repository")
    assert result.fallback is None
    assert result.names[0] == "github_create_issue"
    assert "github_list_pulls" in result.names  # sibling of a strong hit
    sibling = next(m for m in result.matches if m.name == "github_list_pulls")
    assert sibling.reason in {"sibling", "match"}


def test_index_is_lazy_and_incremental():
    emb = CountingEmbeddings()
    index = ToolIndex(CATALOG, embeddings=emb)
    assert emb.seen == []  # nothing embedded before the first search
    index.search("email")
    assert len(emb.seen) == len(CATALOG)
    index.add(memory_note)
    index.search("note")
    assert len(emb.seen) == len(CATALOG) + 1  # only the new tool
    index.remove("email_read")
    assert "email_read" not in index.search("read emails in a folder").names
    assert index.memory_bytes() > 0


def test_duplicate_names_replace_and_missing_descriptions():
    def weather(city: str) -> str:
        return "sunny"

    index = ToolIndex([email_send], embeddings=None)
    index.add({"name": "email_send", "description": "Replacement sender", "parameters": {}})
    assert len(index) == 1 and index.get("email_send").description == "Replacement sender"
    index.add(weather)  # no docstring at all
    assert index.get("weather").description == ""
    assert "weather" in index.search("weather for a city").names


def test_fallbacks_name_domain_domains_and_empty():
    index = lexical_index()
    by_name = index.search("zzz github_list_pulls")
    assert by_name.fallback in {None, "name"} and "github_list_pulls" in by_name.names
    by_domain = index.search("something in calendar", domain=None)
    assert "calendar_create_event" in by_domain.names
    nothing = index.search("qwertyuiop")
    assert nothing.fallback == "domains" and nothing.domains["email"] == 2
    empty = ToolIndex([], embeddings=None).search("send email")
    assert empty.fallback == "domains" and empty.domains == {}


def test_domain_filter():
    result = lexical_index().search("create something", domain="calendar")
    assert result.names == ["calendar_create_event"]


@pytest.mark.embeddings
def test_semantic_search_with_the_packaged_model():
    index = ToolIndex(CATALOG)  # "auto": the packaged MiniLM
    result = index.search("email John about the quarterly report")
    # The email tools come first; with the packaged model (v2) "read the latest emails"
    # edges ahead of "send an email" by 0.01 ("report" ~ "read"), as low-confidence
    # candidates: both are loaded, the model picks (docs/benchmarks.md, the encoder).
    assert set(result.names[:2]) == {"email_send", "email_read"}
    # Another language: a cognate ("e-mail") is enough for the right tool to be loaded.
    french = index.search("envoyer un e-mail à Jean")
    assert french.fallback in {None, "candidates"} and french.names[0] == "email_send"


def test_merge_loaded_tools():
    a = merge_loaded_tools(None, {"turn": "t1", "names": ["x"]})
    b = merge_loaded_tools(a, {"turn": "t1", "names": ["y", "x"]})
    # Least recently requested first: "x", requested again, is the latest.
    assert b == {"turn": "t1", "names": ["y", "x"]}
    assert merge_loaded_tools(b, {"turn": "t1", "names": ["z"]})["names"] == ["y", "x", "z"]
    assert merge_loaded_tools(b, {"turn": "t2", "names": ["z"]}) == {"turn": "t2", "names": ["z"]}


# -- create_agent end to end --------------------------------------------------------------


def scripted_agent_model() -> ToolCallingScriptedModel:
    def decide(messages: list[Any]) -> AIMessage:
        last = messages[-1]
        if isinstance(last, HumanMessage):
            if "again" in str(last.content):  # turn 2: try the tool without requesting it
                return AIMessage(
                    "",
                    tool_calls=[
                        {
                            "name": "email_send",
                            "id": "c3",
                            "type": "tool_call",
                            "args": {"to": "ann@x.org", "body": "again"},
                        }
                    ],
                )
            return AIMessage(
                "",
                tool_calls=[
                    {
                        "name": "request_tools",
                        "id": "c1",
                        "type": "tool_call",
                        "args": {"query": "send an email message"},
                    }
                ],
            )
        if isinstance(last, ToolMessage) and last.name == "request_tools":
            return AIMessage(
                "",
                tool_calls=[
                    {
                        "name": "email_send",
                        "id": "c2",
                        "type": "tool_call",
                        "args": {"to": "john@x.org", "body": "Q4 report"},
                    }
                ],
            )
        return AIMessage(f"done: {last.content}")

    return ToolCallingScriptedModel(script=decide)


def bound_names(model: ToolCallingScriptedModel) -> list[set[str]]:
    return [{getattr(t, "name", None) or t.get("name") for t in tools} for tools, _ in model.bound]


def test_create_agent_discovers_loads_calls_and_forgets():
    SENT.clear()
    model = scripted_agent_model()
    middleware = ToolLibrarianMiddleware(lexical_index())
    agent = create_agent(
        model, tools=[memory_note], middleware=[middleware], checkpointer=MemorySaver()
    )
    cfg = {"configurable": {"thread_id": "tools-1"}}
    result = agent.invoke({"messages": [HumanMessage("Email John about the Q4 report")]}, cfg)
    assert SENT == [{"to": "john@x.org", "body": "Q4 report"}]
    rounds = bound_names(model)
    assert "email_send" not in rounds[0] and {"memory_note", "request_tools"} <= rounds[0]
    assert "email_send" in rounds[1] and "email_read" in rounds[1]  # hot-loaded with sibling
    assert "github_create_issue" not in rounds[1]
    loaded = next(
        m for m in result["messages"] if isinstance(m, ToolMessage) and m.name == "request_tools"
    )
    assert "email_send" in loaded.content
    # Next turn: the tool is gone again; calling it anyway gets a model-visible refusal.
    result = agent.invoke({"messages": [HumanMessage("send it again please")]}, cfg)
    assert "email_send" not in bound_names(model)[-2]
    refusal = [
        m for m in result["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == "c3"
    ]
    assert refusal and refusal[0].status == "error" and "not loaded" in refusal[0].content
    assert len(SENT) == 1


async def test_create_agent_async():
    SENT.clear()
    model = scripted_agent_model()
    agent = create_agent(
        model, tools=[memory_note], middleware=[ToolLibrarianMiddleware(lexical_index())]
    )
    await agent.ainvoke({"messages": [HumanMessage("Email John about the Q4 report")]})
    assert SENT == [{"to": "john@x.org", "body": "Q4 report"}]


def test_swarm_mode_gives_everything_up_front():
    SENT.clear()

    def decide(messages: list[Any]) -> AIMessage:
        if isinstance(messages[-1], HumanMessage):
            return AIMessage(
                "",
                tool_calls=[
                    {
                        "name": "email_send",
                        "id": "s1",
                        "type": "tool_call",
                        "args": {"to": "a@b.c", "body": "hi"},
                    }
                ],
            )
        return AIMessage("ok")

    model = ToolCallingScriptedModel(script=decide)
    agent = create_agent(
        model,
        tools=[memory_note],
        middleware=[ToolLibrarianMiddleware(lexical_index(), mode="all")],
    )
    agent.invoke({"messages": [HumanMessage("go")]})
    assert {t.name for t in CATALOG} <= bound_names(model)[0]
    assert "request_tools" not in bound_names(model)[0]
    assert SENT == [{"to": "a@b.c", "body": "hi"}]


def test_tool_removed_between_rounds_and_unknown_tool():
    index = lexical_index()
    middleware = ToolLibrarianMiddleware(index)

    def decide(messages: list[Any]) -> AIMessage:
        last = messages[-1]
        if isinstance(last, HumanMessage):
            return AIMessage(
                "",
                tool_calls=[
                    {
                        "name": "request_tools",
                        "id": "r1",
                        "type": "tool_call",
                        "args": {"query": "send an email message"},
                    }
                ],
            )
        if last.name == "request_tools":
            index.remove("email_send")  # removed after it was loaded
            return AIMessage(
                "",
                tool_calls=[
                    {
                        "name": "email_send",
                        "id": "r2",
                        "type": "tool_call",
                        "args": {"to": "x", "body": "y"},
                    },
                    {"name": "no_such_tool", "id": "r3", "type": "tool_call", "args": {}},
                ],
            )
        return AIMessage("finished")

    model = ToolCallingScriptedModel(script=decide)
    agent = create_agent(model, tools=[memory_note], middleware=[middleware])
    result = agent.invoke({"messages": [HumanMessage("mail please")]})
    errors = {
        m.tool_call_id: m
        for m in result["messages"]
        if isinstance(m, ToolMessage) and m.status == "error"
    }
    assert "not available" in errors["r2"].content and "not available" in errors["r3"].content
    assert result["messages"][-1].content == "finished"


def test_request_tools_failure_is_a_message_not_a_crash():
    class Broken(ToolIndex):
        def search(self, *args: Any, **kwargs: Any):
            raise RuntimeError("embedding server down")

    def decide(messages: list[Any]) -> AIMessage:
        if isinstance(messages[-1], HumanMessage):
            return AIMessage(
                "",
                tool_calls=[
                    {
                        "name": "request_tools",
                        "id": "b1",
                        "type": "tool_call",
                        "args": {"query": "anything"},
                    }
                ],
            )
        return AIMessage(str(messages[-1].content))

    agent = create_agent(
        ToolCallingScriptedModel(script=decide),
        tools=[memory_note],
        middleware=[ToolLibrarianMiddleware(Broken(CATALOG, embeddings=None))],
    )
    result = agent.invoke({"messages": [HumanMessage("x")]})
    assert "unavailable" in result["messages"][-1].content
    no_match = agent = create_agent(
        ToolCallingScriptedModel(script=decide),
        tools=[memory_note],
        middleware=[ToolLibrarianMiddleware(lexical_index())],
    ).invoke({"messages": [HumanMessage("x")]})
    assert "No tools matched" in no_match["messages"][-1].content  # "x": no word to match


# -- hand-built StateGraph ---------------------------------------------------------------------


class GraphState(MessagesState, ToolLibrarianStateFields):
    pass


def hand_built_graph(
    state: type[Any], librarian: ToolLibrarianMiddleware, model: ToolCallingScriptedModel
) -> StateGraph:
    """A model node binding ``tools_for(state)`` and a ToolNode wrapped by the librarian."""

    def call_model(state: Any) -> dict[str, Any]:
        bound = model.bind_tools([memory_note, *librarian.tools_for(state)])
        return {"messages": [bound.invoke(state["messages"])]}

    builder = StateGraph(state)
    builder.add_node("model", call_model)
    builder.add_node(
        "tools",
        ToolNode(
            [memory_note, librarian.request_tools],
            wrap_tool_call=librarian.wrap_tool_call,
            awrap_tool_call=librarian.awrap_tool_call,
        ),
    )
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    return builder


def test_state_graph_variant_with_tool_node():
    SENT.clear()
    librarian = ToolLibrarianMiddleware(lexical_index())
    model = scripted_agent_model()
    graph = hand_built_graph(GraphState, librarian, model).compile(checkpointer=MemorySaver())
    cfg = {"configurable": {"thread_id": "sg"}}
    graph.invoke({"messages": [HumanMessage("Email John about the Q4 report")]}, cfg)
    assert SENT == [{"to": "john@x.org", "body": "Q4 report"}]
    assert "email_send" in bound_names(model)[1]
    graph.invoke({"messages": [HumanMessage("send it again please")]}, cfg)
    assert len(SENT) == 1  # not loaded in the new turn
    assert END


def test_a_graph_state_without_the_loaded_tools_field_says_so():
    """A hand-built graph whose state lacks ``ToolLibrarianStateFields``: LangGraph drops
    the ``loaded_tools`` update, so every requested tool was refused as "not loaded in
    this turn. Call request_tools first", and the model looped on request_tools until
    the recursion limit. The developer gets a ConfigurationError naming the fix."""
    SENT.clear()
    librarian = ToolLibrarianMiddleware(lexical_index())
    graph = hand_built_graph(MessagesState, librarian, scripted_agent_model()).compile()
    with pytest.raises(ConfigurationError, match="ToolLibrarianStateFields"):
        graph.invoke({"messages": [HumanMessage("Email John about the Q4 report")]})
    assert SENT == []


def test_two_tools_of_one_name_in_one_catalog_are_warned_about(caplog):
    # Tools gathered from several MCP servers: one "send" shadows the other.
    @tool("send")
    def send_email(to: str, body: str) -> str:
        """Send an e-mail message to a recipient."""
        return "sent"

    @tool("send")
    def send_money(to: str, amount: float) -> str:
        """Transfer money to a bank account."""
        return "paid"

    with caplog.at_level("WARNING", logger="langgraph_librarian.tools"):
        index = ToolIndex([send_email, send_money])
    assert index.get("send").description.startswith("Transfer money")
    warned = [r.getMessage() for r in caplog.records if "two tools named" in r.getMessage()]
    assert len(warned) == 1 and "'send'" in warned[0]
    caplog.clear()
    with caplog.at_level("WARNING", logger="langgraph_librarian.tools"):
        index.add(send_email)  # a refreshed catalog replaces a tool quietly
        ToolIndex([send_money, send_money])  # the same tool listed twice
    assert not [r for r in caplog.records if "two tools named" in r.getMessage()]


def _service_catalog() -> list[Any]:
    from langchain_core.tools import StructuredTool

    return [
        StructuredTool.from_function(
            lambda: "ok", name=f"svc{i}_op{j}", description=f"Operation {j} of service {i}."
        )
        for i in range(40)
        for j in range(8)
    ]


def test_a_turn_that_keeps_requesting_binds_at_most_max_live_tools() -> None:
    """Thirty request_tools calls in one turn bound 241 tools to the last model call
    (OpenAI refuses more than 128): the latest requested ``max_live_tools`` stay live."""
    calls = [0]

    def decide(messages: list[Any]) -> AIMessage:
        if calls[0] < 30:
            calls[0] += 1
            call = {
                "name": "request_tools",
                "args": {"query": f"svc{calls[0]}"},
                "id": f"r{calls[0]}",
            }
            return AIMessage("", tool_calls=[{**call, "type": "tool_call"}])
        return AIMessage("done")

    model = ToolCallingScriptedModel(script=decide)
    librarian = ToolLibrarianMiddleware(ToolIndex(_service_catalog(), embeddings=None))
    agent = create_agent(model, tools=[], middleware=[librarian])
    out = agent.invoke({"messages": [HumanMessage("go")]}, {"recursion_limit": 200})
    assert len(out["loaded_tools"]["names"]) > librarian.max_live_tools
    live = bound_names(model)[-1] - {"request_tools"}
    assert len(live) == librarian.max_live_tools == 64
    # The latest requested are the live ones.
    assert set(out["loaded_tools"]["names"][-64:]) == live


def test_a_tool_past_the_bound_is_refused_then_live_when_requested_again() -> None:
    steps = iter(
        [
            ("request_tools", {"query": "svc1_op1"}),
            ("request_tools", {"query": "svc2_op2"}),
            ("svc1_op1", {}),  # past the bound of one: not loaded
            ("request_tools", {"query": "svc1_op1"}),
            ("svc1_op1", {}),
        ]
    )

    def decide(messages: list[Any]) -> AIMessage:
        step = next(steps, None)
        if step is None:
            return AIMessage("done")
        name, args = step
        return AIMessage(
            "",
            tool_calls=[
                {"name": name, "args": args, "id": f"c{len(messages)}", "type": "tool_call"}
            ],
        )

    librarian = ToolLibrarianMiddleware(
        ToolIndex(_service_catalog(), embeddings=None), max_live_tools=1
    )
    agent = create_agent(ToolCallingScriptedModel(script=decide), tools=[], middleware=[librarian])
    out = agent.invoke({"messages": [HumanMessage("go")]})
    results = [m for m in out["messages"] if isinstance(m, ToolMessage) and m.name == "svc1_op1"]
    assert [m.status for m in results] == ["error", "success"]
    assert "not loaded" in str(results[0].content) and results[1].content == "ok"


@pytest.mark.parametrize("bad", [0, -3, 8.0, None, True])
def test_max_live_tools_must_be_a_positive_int(bad: Any) -> None:
    with pytest.raises((TypeError, ValueError), match="max_live_tools"):
        ToolLibrarianMiddleware(ToolIndex([], embeddings=None), max_live_tools=bad)
