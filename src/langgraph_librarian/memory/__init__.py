"""Running-summary memory and provider-valid trimming (specs 02 and 05).

- :class:`RunningSummarizer` (and the one-off :func:`summarize_messages` /
  :func:`asummarize_messages`): previous summary + messages -> a bounded new summary,
  offline (extractive) or with a chat model, sync and async, usable anywhere.
- ``StateGraph`` pieces: :class:`SummaryState` / :class:`SummaryFields`,
  :func:`create_summarize_node`, :func:`create_summary_router` (and
  :data:`should_summarize`), :func:`build_model_input` / :func:`summary_message`,
  and the ready two-node :func:`create_summary_graph`;
  spec 05's plain :func:`create_delete_messages_node`.
- ``create_agent``: :class:`RunningSummaryMiddleware`, LangChain's
  ``SummarizationMiddleware`` with an offline summarizer and fail-open behaviour.
- Valid histories: :func:`history_problems`, :func:`repair_history`,
  :func:`trim_history`, :func:`filter_history`, and :func:`plan_summary_cut`.
"""

from langgraph_librarian.memory._assistant import create_summary_graph
from langgraph_librarian.memory._cut import plan_summary_cut
from langgraph_librarian.memory._graph import (
    SummaryFields,
    SummaryState,
    build_model_input,
    create_summary_router,
    should_summarize,
)
from langgraph_librarian.memory._history import (
    filter_history,
    history_problems,
    repair_history,
    trim_history,
)
from langgraph_librarian.memory._middleware import RunningSummaryMiddleware
from langgraph_librarian.memory._nodes import create_delete_messages_node, create_summarize_node
from langgraph_librarian.memory._prompts import summary_message
from langgraph_librarian.memory._summarizer import (
    RunningSummarizer,
    SummarizationError,
    SummaryResult,
    asummarize_messages,
    summarize_messages,
)

__all__ = [
    "RunningSummarizer",
    "RunningSummaryMiddleware",
    "SummarizationError",
    "SummaryFields",
    "SummaryResult",
    "SummaryState",
    "asummarize_messages",
    "build_model_input",
    "create_delete_messages_node",
    "create_summarize_node",
    "create_summary_graph",
    "create_summary_router",
    "filter_history",
    "history_problems",
    "plan_summary_cut",
    "repair_history",
    "should_summarize",
    "summarize_messages",
    "summary_message",
    "trim_history",
]
