"""What the three recipe-assistant variants share: the script, the offline chef, the CLI.

Chef Aria is spec 02's scenario: on Monday Sam says they are vegetarian and allergic
to nuts, then chats about other things; on Thursday, in a new process, Sam asks for a
nut tart. Kim, in another thread, says nothing about allergies. Aria must warn Sam and
must never tell Kim about Sam.

Offline (the default) Aria is :class:`OfflineChef`, a deterministic stand-in that
answers only from what it is given: it reads the dietary facts present in its input
(system messages, summary, messages) and checks the question against them. So its
answer shows whether the fact reached the model's input. ``--model provider:model``
uses a real chat model instead (``init_chat_model``; needs that provider's package
and API key).
"""

from __future__ import annotations

import argparse
import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.sqlite import SqliteSaver

PERSONA = (
    "You are Chef Aria, a friendly recipe assistant. Respect every dietary preference "
    "and allergy the user has told you about, even in earlier sessions."
)

SCRIPT: dict[str, dict[str, list[str]]] = {
    "monday": {
        "sam": [
            "Hi Aria, I'm Sam. I'm vegetarian and I'm allergic to nuts.",
            "What's a quick lunch for today?",
            "I love Thai food, especially green curry.",
            "Can you give me a shopping list for the curry?",
            "How long does jasmine rice take to cook?",
            "My sister visits on Saturday and she hates coriander.",
            "What goes well with mango for breakfast?",
        ],
        "kim": [
            "Hello! I'm Kim and I eat everything.",
            "I'd like to bake more this month.",
        ],
    },
    "thursday": {
        "sam": ["Could I make a nut tart for dessert tonight?"],
        "kim": ["Could I make a nut tart for dessert tonight?"],
    },
}

_ALLERGY = re.compile(r"allergic to ([a-z]+(?: and [a-z]+)?)", re.IGNORECASE)
_DIET = re.compile(r"\b(vegetarian|vegan)\b", re.IGNORECASE)


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return " ".join(b.get("text", "") for b in content if isinstance(b, dict))


class OfflineChef(BaseChatModel):
    """A deterministic chef that knows only what is in its input."""

    @property
    def _llm_type(self) -> str:
        return "offline-chef"

    def _answer(self, messages: list[BaseMessage]) -> str:
        question = next((_text(m) for m in reversed(messages) if m.type == "human"), "")
        context = " ".join(_text(m) for m in messages if m.type in {"system", "human"})
        allergies = sorted({a.lower() for a in _ALLERGY.findall(context)})
        diets = sorted({d.lower() for d in _DIET.findall(context)})
        asked = set(re.findall(r"[a-z]+", question.lower()))
        clash = [a for a in allergies if {a, a.rstrip("s")} & asked]
        if clash and question.rstrip().endswith("?"):
            return (
                f"Better not: you told me you're allergic to {clash[0]}. "
                "How about a lemon tart with a shortbread crust instead?"
            )
        known = "; ".join([*(f"allergic to {a}" for a in allergies), *diets]) or "nothing special"
        opener = "Happy to help!" if question.rstrip().endswith("?") else "Noted!"
        return f"{opener} (What I know about your diet: {known}.)"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(self._answer(messages)))])


def parse_args(description: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("day", choices=[*SCRIPT, "say"], help="which part of the week to run")
    parser.add_argument("text", nargs="?", help="with 'say': the message to send")
    parser.add_argument("--db", default="recipe_chat.db", help="SQLite checkpoint file")
    parser.add_argument("--thread", default="sam", help="with 'say': the conversation thread")
    parser.add_argument(
        "--model", default=None, help='e.g. "openai:gpt-4o-mini" (default: offline)'
    )
    args = parser.parse_args()
    if args.day == "say" and not args.text:
        parser.error("'say' needs the message text")
    return args


def chat_model(spec: str | None) -> BaseChatModel:
    if spec is None:
        return OfflineChef()
    from langchain.chat_models import init_chat_model

    return init_chat_model(spec)


@contextmanager
def sqlite_checkpointer(path: str) -> Iterator[SqliteSaver]:
    """A SqliteSaver on ``path``; the file keeps every thread across restarts."""
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        yield SqliteSaver(conn)
    finally:
        conn.close()


def run(
    args: argparse.Namespace,
    turn: Callable[[str, str], tuple[str, str]],
) -> None:
    """Send the day's messages (or one ``say`` message) through ``turn(thread, text)``.

    ``turn`` returns the reply and a one-line description of the memory after the turn.
    """
    plan = {args.thread: [args.text]} if args.day == "say" else SCRIPT[args.day]
    for thread, texts in plan.items():
        for text in texts:
            reply, memory = turn(thread, text)
            print(f"[{thread}] user: {text}")
            print(f"[{thread}] aria: {reply}")
            print(f"[{thread}] memory: {memory}")
