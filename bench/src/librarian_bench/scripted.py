"""Scripted models for the bench's model path: a weak model and an oracle.

``librarian bench --model scripted:weak`` answers like the small local models seen in
practice: garbage or fabricated summaries (filler, meta-answers, refusals, a summary with
its numbers changed) and selections that are wrong (the earliest index entries, which the
questions never need) or unreadable (prose, ``IDs: []``). ``scripted:oracle`` writes
faithful summaries (the message's opening sentences) and selects exactly the gold
evidence. Neither needs a network or weights; they show what the model path does with a
model at either end: the weak one must not cost context success against the offline
Librarian, the oracle should add to it.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, PrivateAttr

from langgraph_librarian._engine.messages import message_text
from langgraph_librarian._engine.text import content_terms
from langgraph_librarian.index.extractive import extractive_summary

__all__ = ["SCRIPTED_KINDS", "ScriptedBenchModel"]

SCRIPTED_KINDS = ("weak", "oracle")

_GARBAGE_SUMMARIES = (
    "Just like that.",
    "OK",
    "Sure! Here is the summary:",
    "The message is not found.",
    "I'm sorry, but I can't help with summarizing that.",
    "The user asked a question about their plans.",
)
_GARBAGE_SELECTIONS = (
    "I think we need the budget. Paid: 5",
    "Looking at the index.\nIDs: []",
    "IDs: [<comma-separated message ids>]",
)
_LINE = re.compile(r'^\{"id": (\d+),.*"summary": "(.*)"\}$', re.M)
_QUERY = re.compile(r"<query>\s*\n(.*?)\n</query>", re.S)


def _fabricate(text: str, seed: int) -> str:
    """The message's first sentence with every number changed: a plausible lie."""
    first = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0][:240]
    changed = re.sub(r"\d+", lambda m: str(int(m.group(0)) + 7 + seed % 5), first)
    return changed if changed != first else f"{first} Confirmation CRG-2{seed % 10000:04d}."


class ScriptedBenchModel(BaseChatModel):
    """A deterministic chat model that plays a weak model or an oracle in the bench.

    Call :meth:`use` with the bench's conversations before running (the oracle looks up
    the gold evidence of the question it is asked about).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    kind: Literal["weak", "oracle"] = "weak"
    _gold: dict[str, list[list[tuple[int, str]]]] = PrivateAttr(default_factory=dict)
    _calls: int = PrivateAttr(default=0)

    @property
    def _llm_type(self) -> str:
        return f"scripted-{self.kind}"

    def use(self, conversations: Sequence[Any]) -> ScriptedBenchModel:
        """Learn each question's evidence: positions and texts, per conversation."""
        self._gold.clear()
        for conv in conversations:
            where = {m.id: i for i, m in enumerate(conv.messages)}
            for question in conv.questions:
                found = [
                    (where[e], message_text(conv.messages[where[e]]))
                    for e in question.evidence
                    if e in where
                ]
                self._gold.setdefault(question.text, []).append(found)
        return self

    # -- answers -------------------------------------------------------------------

    def _summary(self, prompt: str) -> str:
        body = prompt.rsplit("<message>", 1)[-1].split("</message>", 1)[0].strip()
        seed = zlib.crc32(body.encode())
        if self.kind == "oracle":
            # A faithful summary that keeps the index the offline engine would build, so
            # the bench compares selection only.
            return extractive_summary(body, "human")
        if seed % 3 == 0:
            return _fabricate(body, seed)
        return _GARBAGE_SUMMARIES[seed % len(_GARBAGE_SUMMARIES)]

    def _evidence(self, query: str, lines: dict[int, str]) -> list[int]:
        """The gold positions of the question; among same-text questions, the one whose
        evidence matches this index."""
        best: list[int] = []
        best_score = -1.0
        for found in self._gold.get(query, []):
            score = 0.0
            for position, text in found:
                summary = lines.get(position)
                if summary is not None:
                    terms = set(content_terms(summary))
                    score += 1 + len(terms & set(content_terms(text))) / max(len(terms), 1)
            if score > best_score:
                best, best_score = [p for p, _ in found], score
        return best

    def _selection(self, prompt: str) -> str:
        lines = {int(i): s for i, s in _LINE.findall(prompt)}
        match = _QUERY.search(prompt)
        query = json.loads(match.group(1)) if match else ""
        seed = zlib.crc32(query.encode())
        if self.kind == "oracle":
            wanted = [p for p in self._evidence(query, lines) if p in lines]
            return f"IDs: {wanted}" if wanted else "IDs: none"
        if seed % 3 == 0:
            return _GARBAGE_SELECTIONS[seed % len(_GARBAGE_SELECTIONS)]
        gold = set(self._evidence(query, lines))
        wrong = [i for i in sorted(lines) if i not in gold][:4]  # early chit-chat
        return f"These look relevant.\nIDs: {wrong}"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self._calls += 1
        prompt = "\n".join(message_text(m) for m in messages)
        if "<index>" in prompt:
            text = self._selection(prompt)
        elif "<message>" in prompt:
            text = self._summary(prompt)
        else:  # the running summary or anything else: a weak model's filler
            text = "OK" if self.kind == "weak" else prompt[-400:]
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])
