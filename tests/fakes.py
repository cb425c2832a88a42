"""Deterministic chat models that record their calls (sync and async)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import ConfigDict, Field, PrivateAttr

Reply = str | AIMessage | BaseException | Callable[[list[BaseMessage]], str | AIMessage]


class ScriptedChatModel(BaseChatModel):
    """Answers from a script: a list consumed in order (the last item repeats) or a function.

    Exceptions in the script are raised. ``latency`` sleeps before answering (real
    ``time.sleep`` / ``asyncio.sleep``). Every prompt is recorded in ``calls``, every
    run config's tags in ``tags``; ``peak`` is the most calls seen in flight at once.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    script: Any = Field(default="ok")
    latency: float = 0.0
    _calls: list[list[BaseMessage]] = PrivateAttr(default_factory=list)
    _async_calls: int = PrivateAttr(default=0)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)
    _position: int = PrivateAttr(default=0)
    _in_flight: int = PrivateAttr(default=0)
    _peak: int = PrivateAttr(default=0)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def calls(self) -> list[list[BaseMessage]]:
        return self._calls

    @property
    def async_calls(self) -> int:
        return self._async_calls

    @property
    def peak(self) -> int:
        return self._peak

    @property
    def in_flight(self) -> int:
        """Calls answering right now."""
        return self._in_flight

    def _enter(self) -> None:
        with self._lock:
            self._in_flight += 1
            self._peak = max(self._peak, self._in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _next(self, messages: Sequence[BaseMessage]) -> AIMessage:
        with self._lock:
            self._calls.append(list(messages))
            if isinstance(self.script, list):
                item = self.script[min(self._position, len(self.script) - 1)]
                self._position += 1
            else:
                item = self.script
        if isinstance(item, BaseException):
            raise item
        if callable(item):
            item = item(list(messages))
        return item if isinstance(item, AIMessage) else AIMessage(content=str(item))

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self._enter()
        try:
            if self.latency:
                time.sleep(self.latency)
            return ChatResult(generations=[ChatGeneration(message=self._next(messages))])
        finally:
            self._leave()

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self._async_calls += 1
        self._enter()
        try:
            if self.latency:
                await asyncio.sleep(self.latency)
            return ChatResult(generations=[ChatGeneration(message=self._next(messages))])
        finally:
            self._leave()


class StatusError(Exception):
    """An API error with an HTTP status, shaped like the provider SDKs' errors."""

    def __init__(self, status_code: int, message: str = "") -> None:
        super().__init__(message or f"HTTP {status_code}")
        self.status_code = status_code


def prompt_text(messages: Sequence[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages)


class ToolCallingScriptedModel(ScriptedChatModel):
    """A scripted model that accepts ``bind_tools`` (so structured output works)."""

    _bound: list[Any] = PrivateAttr(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:  # type: ignore[override]
        self._bound.append((list(tools), kwargs))
        return self

    @property
    def bound(self) -> list[Any]:
        return self._bound


class StreamingScriptedModel(ToolCallingScriptedModel):
    """A scripted model that streams its answer word by word (sync and async), so
    ``stream_mode="messages"`` shows its tokens unless its call is tagged ``nostream``."""

    def _chunks(self, messages: Sequence[BaseMessage]) -> list[ChatGenerationChunk]:
        text = str(self._next(messages).content)
        words = text.split(" ")
        return [
            ChatGenerationChunk(message=AIMessageChunk(content=w if i == 0 else f" {w}"))
            for i, w in enumerate(words)
        ]

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for chunk in self._chunks(messages):
            if run_manager is not None:
                run_manager.on_llm_new_token(str(chunk.message.content), chunk=chunk)
            yield chunk

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        self._async_calls += 1
        for chunk in self._chunks(messages):
            if run_manager is not None:
                await run_manager.on_llm_new_token(str(chunk.message.content), chunk=chunk)
            yield chunk


def first_sentence(messages: Sequence[BaseMessage]) -> str:
    """A faithful summary for scripted indexers: the fenced message's first sentences.

    Summaries are validated (facts from the message, no filler), so scripted indexers
    that must be *accepted* answer with text taken from the message.
    """
    text = str(messages[-1].content)
    body = text.split("<message>", 1)[-1].split("</message>", 1)[0].strip()
    return ". ".join(body.split(". ")[:2]).strip()[:300]


def hung_sync_only_calls_leave_the_default_executor_free(
    call: Callable[[Any], Any], calls: int = 12
) -> bool:
    """Whether ``calls`` async calls ``call(store)`` against a sync-only store (``abatch``
    not implemented, as ``SqliteStore``) whose ``batch`` hangs leave the event loop's
    default executor (6 threads on two cores) free for the loop's other work.

    The store is released at the end, and the hung calls awaited.
    """
    from langgraph.store.memory import InMemoryStore

    release = threading.Event()

    class HungSyncStore(InMemoryStore):
        def batch(self, ops: Any) -> Any:
            release.wait(20)
            return super().batch(ops)

        async def abatch(self, ops: Any) -> Any:
            raise NotImplementedError

    store = HungSyncStore()

    async def scenario() -> bool:
        hung = [asyncio.ensure_future(call(store)) for _ in range(calls)]
        await asyncio.sleep(0.2)
        try:
            return await asyncio.wait_for(asyncio.to_thread(lambda: True), timeout=5)
        finally:
            release.set()
            await asyncio.gather(*hung)

    return asyncio.run(scenario())
