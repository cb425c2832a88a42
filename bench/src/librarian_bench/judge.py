"""Answer success: an answering model reads the curated context, a judge grades it."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from langgraph_librarian._engine.calls import ModelCaller
from langgraph_librarian._engine.messages import message_text, output_text

__all__ = ["ANSWER_PROMPT", "JUDGE_RUBRIC", "AnswerJudge", "Judgement"]

ANSWER_PROMPT = (
    "You are a helpful assistant in a long conversation. Answer the user's last message "
    "using only what the conversation says. Be brief: a few words or one sentence. If the "
    'conversation does not say, answer "I don\'t know".'
)

JUDGE_RUBRIC = """You grade answers to questions about a conversation.
Compare the candidate answer with the gold answer.
- CORRECT: the candidate states the same fact as the gold answer (wording, format, extra detail or
  a different but equivalent date/number format do not matter). When the gold answer lists several
  items or a change "A -> B", the candidate must contain all of them (for a change: the final value,
  and the earlier one if the question asks what changed).
- WRONG: the candidate contradicts the gold answer, misses part of it, gives an outdated value, or
  says it does not know.
Reply with one JSON object only: {"verdict": "CORRECT" | "WRONG", "reason": "<one sentence>"}"""

_VERDICT = re.compile(r"\b(CORRECT|WRONG)\b")


@dataclass
class Judgement:
    """An answer and its grade."""

    answer: str
    correct: bool
    reason: str
    tokens: int


class AnswerJudge:
    """Generates an answer from curated context and grades it with a fixed rubric.

    Args:
        answer_model: Answers from the curated context (the last message is the question).
        judge_model: Grades against the gold answer; an unparsable verdict counts as wrong.
    """

    def __init__(self, answer_model: BaseChatModel, judge_model: BaseChatModel) -> None:
        self.answer_model = answer_model
        self.judge_model = judge_model

    def judge(self, question: str, gold: str, context: Sequence[BaseMessage]) -> Judgement:
        prompt: list[BaseMessage] = [SystemMessage(ANSWER_PROMPT), *context]
        answer = output_text(
            ModelCaller(self.answer_model, step="answer", timeout=120, backoff=1.0).invoke(prompt)
        ).strip()
        grading = [
            SystemMessage(JUDGE_RUBRIC),
            HumanMessage(
                json.dumps(
                    {"question": question, "gold_answer": gold, "candidate_answer": answer},
                    ensure_ascii=False,
                )
            ),
        ]
        raw = output_text(
            ModelCaller(self.judge_model, step="judge", timeout=120, backoff=1.0).invoke(grading)
        ).strip()
        verdict, reason = "WRONG", "unparsable verdict"
        try:
            data = json.loads(raw[raw.index("{") : raw.rindex("}") + 1])
            verdict, reason = str(data.get("verdict", "")).upper(), str(data.get("reason", ""))
        except ValueError:
            match = _VERDICT.search(raw.upper())
            if match:
                verdict, reason = match.group(1), raw[:200]
        tokens = sum(len(message_text(m)) for m in [*prompt, *grading]) // 4 + len(answer) // 4
        return Judgement(answer, verdict == "CORRECT", reason, tokens)
