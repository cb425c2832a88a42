"""A scripted OpenAI-compatible chat server on loopback, for driving the real client.

It speaks ``POST /v1/chat/completions`` (plain and ``stream: true``) the way llama.cpp,
Ollama and vLLM servers do, and lets a test decide each answer from the request: the
text, a tool call, an HTTP error, a stall, a finish_reason. Every request body is
recorded. With ``one_at_a_time`` it serves like a one-slot llama.cpp server: requests
queue for the slot, and a request whose client disconnects stops (the slot is freed);
``served`` records when each request waited, ran and whether it was abandoned.
"""

from __future__ import annotations

import contextlib
import json
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """What the server answers to one request."""

    content: str = ""
    status: int = 200
    delay: float = 0.0
    tool_call: dict[str, Any] | None = None  # {"name": ..., "arguments": {...}}
    error: str = "scripted failure"
    finish_reason: str = "stop"


@dataclass
class Served:
    """One request as a one-slot server handled it (monotonic seconds)."""

    arrived: float
    started: float = 0.0
    ended: float = 0.0
    abandoned: bool = False


Handler = Callable[[dict[str, Any]], Reply]


def request_format(body: dict[str, Any]) -> str:
    """``"json_schema"``, ``"json_object"``, ``"tools"`` or ``"text"``."""
    response_format = body.get("response_format") or {}
    if response_format.get("type") in {"json_schema", "json_object"}:
        return str(response_format["type"])
    return "tools" if body.get("tools") else "text"


def prompt_of(body: dict[str, Any]) -> str:
    """The request's messages as one text."""
    parts = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        parts.append(str(content or ""))
    return "\n".join(parts)


@dataclass
class ScriptedServer:
    """Runs in a daemon thread; ``url`` is the ``base_url`` for ``ChatOpenAI``."""

    handler: Handler
    one_at_a_time: bool = False
    requests: list[dict[str, Any]] = field(default_factory=list)
    served: list[Served] = field(default_factory=list)
    _slot: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None
    _stop: threading.Event = field(default_factory=threading.Event)

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> ScriptedServer:
        owner = self

        class Handle(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                return

            def do_POST(self) -> None:  # http.server's naming
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                owner.requests.append(body)
                if owner.one_at_a_time:
                    self._one_slot(body)
                    return
                reply = owner.handler(body)
                if reply.delay:
                    owner._stop.wait(reply.delay)
                self._answer(body, reply)

            def _one_slot(self, body: dict[str, Any]) -> None:
                record = Served(arrived=time.monotonic())
                owner.served.append(record)
                with owner._slot:
                    record.started = time.monotonic()
                    reply = owner.handler(body)
                    # "Generate" while watching the client, as llama.cpp does: a closed
                    # connection ends the request and frees the slot.
                    until = record.started + reply.delay
                    while time.monotonic() < until and not owner._stop.is_set():
                        if self._disconnected():
                            record.abandoned = True
                            record.ended = time.monotonic()
                            return
                    record.ended = time.monotonic()
                self._answer(body, reply)

            def _disconnected(self) -> bool:
                readable, _, _ = select.select([self.connection], [], [], 0.02)
                if not readable:
                    return False
                try:
                    return self.connection.recv(1, socket.MSG_PEEK) == b""
                except OSError:
                    return True

            def _answer(self, body: dict[str, Any], reply: Reply) -> None:
                if reply.status != 200:
                    self._json(reply.status, {"error": {"message": reply.error, "code": None}})
                elif body.get("stream"):
                    self._stream(body, reply)
                else:
                    self._json(200, _completion(body, reply))

            def _json(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)  # the client may have given up (a timeout test)

            def _stream(self, body: dict[str, Any], reply: Reply) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                words = reply.content.split(" ")
                pieces = [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words)]
                for piece in pieces:
                    self._event(_chunk(body, {"content": piece}, None))
                self._event(_chunk(body, {}, "stop"))
                self.wfile.write(b"data: [DONE]\n\n")

            def _event(self, payload: dict[str, Any]) -> None:
                self.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
                self.wfile.flush()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handle)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def formats(self) -> list[str]:
        return [request_format(r) for r in self.requests]


def _completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    finish = reply.finish_reason
    if reply.tool_call is not None:
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {
                        "name": reply.tool_call["name"],
                        "arguments": json.dumps(reply.tool_call["arguments"]),
                    },
                }
            ],
        }
        finish = "tool_calls"
    return {
        "id": f"chatcmpl-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "scripted"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _chunk(body: dict[str, Any], delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-stream",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": body.get("model", "scripted"),
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
