"""Context budgets of ``librarian bench``: fixed tokens, the Librarian's default, or a share.

Every strategy of a run gets the same budget for the same history, so comparisons are
at equal tokens whichever form is chosen.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal, TypeAlias

from langchain_core.messages import BaseMessage

from langgraph_librarian.config import auto_budget
from langgraph_librarian.tokens import count_tokens

__all__ = [
    "AUTO",
    "UNBOUNDED",
    "BudgetSpec",
    "budget_label",
    "budget_tokens",
    "config_budget",
    "is_share",
    "parse_budget",
]

AUTO = "auto"
UNBOUNDED = "none"

BudgetSpec: TypeAlias = int | str
"""Tokens (``2000``), ``"auto"`` (the Librarian's default rule, see
:meth:`LibrarianConfig.budget_for`), ``"none"`` (unbounded) or a share of each
history (``"6%"``)."""

_SHARE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$")


def parse_budget(value: str | int) -> BudgetSpec:
    """Check a budget given as text (the CLI) or tokens; raise ``ValueError`` if invalid."""
    if isinstance(value, bool):
        raise ValueError(f"invalid budget {value!r}")
    if isinstance(value, int):
        if value < 1:
            raise ValueError(f"a token budget must be at least 1 (got {value})")
        return value
    text = value.strip().lower()
    if text in (AUTO, UNBOUNDED):
        return text
    share = _SHARE.match(text)
    if share:
        pct = float(share.group(1))
        if not 0 < pct <= 100:
            raise ValueError(f"a share budget must be in (0, 100]% (got {value!r})")
        return f"{pct:g}%"
    if text.isdigit():
        return parse_budget(int(text))
    raise ValueError(
        f"budget must be tokens (2000), 'auto', 'none' or a share ('8%'), got {value!r}"
    )


def budget_tokens(spec: BudgetSpec, history: Sequence[BaseMessage] | int) -> int:
    """The token budget ``spec`` gives a history (messages, or their token count)."""
    if isinstance(spec, int):
        return spec
    tokens = history if isinstance(history, int) else count_tokens(list(history))
    if spec == UNBOUNDED:  # the whole history: a ranking strategy then sends everything
        return max(1, tokens)
    if spec == AUTO:
        return auto_budget(tokens)
    share = _SHARE.match(spec)
    if share is None:
        raise ValueError(f"invalid budget {spec!r}")
    return max(1, round(float(share.group(1)) / 100 * tokens))


def is_share(spec: BudgetSpec) -> bool:
    """Whether ``spec`` is a share of each history (``"6%"``)."""
    return isinstance(spec, str) and spec not in (AUTO, UNBOUNDED)


def config_budget(spec: BudgetSpec) -> int | Literal["auto"] | None:
    """What ``LibrarianConfig.context_token_budget`` gets for ``spec``.

    A share of the history has no config form: it is applied per question (``None``
    here, replaced by the question's token budget).
    """
    if isinstance(spec, int):
        return spec
    return "auto" if spec == AUTO else None


def budget_label(spec: BudgetSpec) -> str:
    """How a run's budget is described in reports."""
    if isinstance(spec, int):
        return f"{spec:,} tokens"
    if spec == UNBOUNDED:
        return "none (unbounded: the Librarian sends every selected message)"
    if spec == AUTO:
        return "auto (the Librarian's default: 7% of each history, 2,000-8,000 tokens)"
    return f"{spec} of each history"
