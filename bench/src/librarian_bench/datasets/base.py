"""The shape every evaluation dataset is loaded into."""

from __future__ import annotations

from dataclasses import dataclass, field

from langchain_core.messages import BaseMessage

__all__ = ["Conversation", "Question"]


@dataclass
class Question:
    """A question asked at the end of a conversation.

    Attributes:
        id: Unique within the dataset.
        text: The question as the user asks it.
        answer: Gold answer (a short string).
        evidence: Ids of the messages that must be in context to answer.
        category: Dataset-specific label (e.g. ``"changed"``, ``"multi"``, ``"single-hop"``).
    """

    id: str
    text: str
    answer: str
    evidence: list[str]
    category: str = "single"
    superseded: list[str] = field(default_factory=list)
    """Ids of messages whose value this question's answer replaced (the older values of
    a changed fact): in context they are fine, as long as the change is there too."""


@dataclass
class Conversation:
    """A long conversation (messages carry ids) and the questions asked about it."""

    id: str
    messages: list[BaseMessage]
    questions: list[Question] = field(default_factory=list)
