"""A fake model API on loopback: the Anthropic Messages API and OpenAI Chat Completions.

An Anthropic request with ``stream: true`` (what Claude Code sends) is answered with the
same scripted reply as server-sent events (``anthropic_events``): message_start, each
content block's start, deltas (``input_json_delta`` for a tool's input) and stop,
message_delta with the stop reason and usage, message_stop.

A real HTTP server (stdlib ThreadingHTTPServer in a thread, on a free port of
127.0.0.1), so the real SDKs run their real HTTP code against it: what the
provider sends is what a real API would receive, and a fault (a status, a
header, a dropped connection, a slow reply, a broken body) reaches the provider
the way a real one would.

Scripted per test: a queue of `Reply`s is served in order, then `handler`
(request JSON -> Reply) if set, then `default`. Every request is recorded
(path, headers, JSON body, when it came and when its reply ended), and the
number of calls in flight is tracked so a test can assert on concurrency.

Faults below HTTP: `drop` (closed before any reply), `cut` (reset mid-body),
`trickle` and `stall` (a reply that never ends), `hang` (no reply at all until
the server stops); `refused_url` is a base URL where nothing listens.

    from fakeapi import FakeAPI, Reply, fake_api_fixture  # noqa: F401  (the `fake_api` fixture)

    def test_x(fake_api: FakeAPI) -> None:
        fake_api.queue(Reply(status=529), Reply(tool_calls=[("find", {"q": "x"})]))
        ...  # base_url=fake_api.url (Anthropic) or api_base=fake_api.url + "/v1" (OpenAI)
        assert len(fake_api.requests) == 2
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

ANTHROPIC_PATH = "/v1/messages"
OPENAI_PATH = "/v1/chat/completions"

# Anthropic's stop reasons are the script's vocabulary; the OpenAI side speaks its own.
_OPENAI_FINISH = {"tool_use": "tool_calls", "end_turn": "stop", "max_tokens": "length"}
# The error type each status carries in a rendered error body (as the real APIs name them).
_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                404: "not_found_error", 408: "timeout_error", 409: "conflict_error",
                429: "rate_limit_error", 529: "overloaded_error"}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # the stdlib default backlog (5) drops connects under a burst of concurrent calls,
    # and a dropped SYN costs the client a 1 s retransmit: that would measure the fake
    request_queue_size = 256


@dataclass
class Reply:
    """One scripted reply. The defaults give a plain text answer, status 200."""

    #: (name, arguments) in order; a str as arguments is sent as-is (raw, maybe not JSON),
    #: and so is any other value of either (a None name is sent as null)
    tool_calls: list[tuple[Any, Any]] = field(default_factory=list)
    #: the wire's tool-call objects sent exactly as given, after those of `tool_calls`
    #: (Anthropic content blocks, OpenAI tool_calls entries): shapes a broken proxy sends
    raw_calls: list[Any] = field(default_factory=list)
    #: OpenAI's message.refusal (a model's refusal as text)
    refusal: str | None = None
    text: str = ""
    #: Anthropic's terms (tool_use, end_turn, max_tokens), mapped for OpenAI; default by content
    stop_reason: str | None = None
    input_tokens: int = 10
    output_tokens: int = 5
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    #: seconds to wait before answering (the call counts as in flight meanwhile)
    delay: float = 0.0
    #: never answer until the server stops: the client's own timeout has to end the call
    hang: bool = False
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    #: an error message: the body becomes the wire format's error body (even at status 200)
    error: str | None = None
    #: a JSON body sent exactly as given, instead of one built from the fields above
    body: Any = None
    #: bytes or text sent exactly as given (malformed bodies, HTML from a proxy)
    raw: bytes | str | None = None
    #: close the connection without answering (a connection error for the client)
    drop: bool = False
    #: send the headers and the first `cut` bytes of the body, then reset the connection (RST)
    cut: int | None = None
    #: send the headers, then the body one byte every `trickle` seconds, all but its last byte,
    #: then nothing: a reply that never ends (until the client hangs up or the server stops)
    trickle: float | None = None
    #: send the headers, then nothing at all until the client hangs up or the server stops
    stall: bool = False


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: Any
    #: time.monotonic() when the request was read
    at: float = 0.0
    #: time.monotonic() when the reply was sent in full, or cut, or the client hung up
    ended: float | None = None


class FakeAPI:
    """The server's script and its record. `url` is the base, e.g. http://127.0.0.1:5123."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.handler: Callable[[Any], Reply] | None = None
        self.default = Reply(text="ok")
        self.requests: list[Recorded] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        #: notified as each call comes in (wait_in_flight)
        self._arrived = threading.Condition(self._lock)
        #: set at stop(): replies that never end (trickle, stall) end then
        self.stopping = threading.Event()
        self._server = _Server(("127.0.0.1", 0), _make_handler(self))
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        # a short poll interval: shutdown() waits up to one interval, at every test's teardown
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="fakeapi", daemon=True)

    # script ---------------------------------------------------------------------
    def queue(self, *replies: Reply) -> None:
        with self._lock:
            self.replies.extend(replies)

    def bodies(self) -> list[Any]:
        return [r.body for r in self.requests]

    def _next(self, body: Any) -> Reply:
        with self._lock:
            if self.replies:
                return self.replies.popleft()
        if self.handler is not None:
            return self.handler(body)
        return self.default

    def _enter(self, rec: Recorded) -> None:
        with self._lock:
            self.requests.append(rec)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self._arrived.notify_all()

    def wait_in_flight(self, n: int, timeout: float = 60.0) -> bool:
        """Wait until `n` calls have been in flight at once; False if that did not happen
        within `timeout`. A handler that waits here holds its reply until the client's
        concurrency shows, however slowly a loaded machine sends the calls."""
        with self._arrived:
            return self._arrived.wait_for(lambda: self.max_in_flight >= n, timeout)

    def wait_requests(self, n: int, timeout: float = 60.0) -> bool:
        """Wait until `n` calls have come in; False if they did not within `timeout`."""
        with self._arrived:
            return self._arrived.wait_for(lambda: len(self.requests) >= n, timeout)

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    # lifetime -------------------------------------------------------------------
    def start(self) -> FakeAPI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


# wire formats --------------------------------------------------------------------
def _usage_anthropic(r: Reply) -> dict[str, Any]:
    return {"input_tokens": r.input_tokens, "output_tokens": r.output_tokens,
            "cache_read_input_tokens": r.cache_read_tokens,
            "cache_creation_input_tokens": r.cache_write_tokens}


def anthropic_body(r: Reply, request: Any) -> Any:
    if r.error is not None:
        kind = _ERROR_TYPES.get(r.status, "api_error" if r.status >= 500 else "invalid_request_error")
        return {"type": "error", "error": {"type": kind, "message": r.error}}
    content: list[dict[str, Any]] = []
    if r.text:
        content.append({"type": "text", "text": r.text})
    for i, (name, args) in enumerate(r.tool_calls):
        # Anthropic sends input as an object; a raw string stands for what a proxy might garble
        content.append({"type": "tool_use", "id": f"toolu_{i:04d}", "name": name, "input": args})
    content += r.raw_calls
    stop = r.stop_reason or ("tool_use" if r.tool_calls or r.raw_calls else "end_turn")
    model = request.get("model", "claude-test") if isinstance(request, dict) else "claude-test"
    return {"id": "msg_fake", "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": stop, "stop_sequence": None, "usage": _usage_anthropic(r)}


def anthropic_events(r: Reply, request: Any) -> list[tuple[str, dict[str, Any]]]:
    """The reply as the Messages API streams it: (event name, data) in order.

    A tool's input is sent as its JSON text cut in two `input_json_delta`s, as the real
    API splits it, so a client that does not join the parts reads broken arguments."""
    message = anthropic_body(r, request)
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None,
             "usage": {**usage, "output_tokens": 1}}
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start",
                                                                    "message": start})]
    for i, block in enumerate(message["content"]):
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_use":
            args = block.get("input")
            text = args if isinstance(args, str) else json.dumps(args)
            head = {**block, "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": part}
                      for part in (text[:len(text) // 2], text[len(text) // 2:])]
        elif block.get("type") == "text":
            head = {**block, "text": ""}
            deltas = [{"type": "text_delta", "text": block["text"]}]
        else:
            head, deltas = block, []
        events.append(("content_block_start", {"type": "content_block_start", "index": i,
                                                "content_block": head}))
        events += [("content_block_delta", {"type": "content_block_delta", "index": i, "delta": d})
                   for d in deltas]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": message["stop_reason"],
                                               "stop_sequence": None},
                                     "usage": {"output_tokens": usage["output_tokens"]}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def sse(events: list[tuple[str, dict[str, Any]]]) -> bytes:
    return b"".join(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events)


def streams(request: Any) -> bool:
    return isinstance(request, dict) and request.get("stream") is True


def openai_body(r: Reply, request: Any) -> Any:
    if r.error is not None:
        kind = _ERROR_TYPES.get(r.status, "server_error" if r.status >= 500 else "invalid_request_error")
        return {"error": {"message": r.error, "type": kind, "code": r.status if r.status != 200 else None}}
    calls = [{"id": f"call_{i:04d}", "type": "function",
              "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}
             for i, (name, args) in enumerate(r.tool_calls)] + r.raw_calls
    message: dict[str, Any] = {"role": "assistant", "content": r.text or None}
    if calls:
        message["tool_calls"] = calls
    if r.refusal is not None:
        message["refusal"] = r.refusal
    stop = r.stop_reason or ("tool_use" if calls else "end_turn")
    usage: dict[str, Any] = {
        # OpenAI counts cached tokens inside prompt_tokens and breaks them out in the details
        "prompt_tokens": r.input_tokens + r.cache_read_tokens + r.cache_write_tokens,
        "completion_tokens": r.output_tokens,
        "total_tokens": r.input_tokens + r.cache_read_tokens + r.cache_write_tokens + r.output_tokens,
        "prompt_tokens_details": {"cached_tokens": r.cache_read_tokens},
    }
    if r.cache_write_tokens:
        usage["cache_creation_input_tokens"] = r.cache_write_tokens
    model = request.get("model", "gpt-test") if isinstance(request, dict) else "gpt-test"
    return {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": _OPENAI_FINISH.get(stop, stop)}],
            "usage": usage}


def _make_handler(api: FakeAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the SDKs' pooled clients expect

        def log_message(self, format: str, *args: Any) -> None:  # quiet: pytest shows failures
            return

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            data = self.rfile.read(length)
            try:
                body: Any = json.loads(data) if data else None
            except ValueError:
                body = data.decode("utf-8", "replace")
            rec = Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body,
                           time.monotonic())
            api._enter(rec)
            try:
                self._answer(api._next(body), body)
            finally:
                rec.ended = time.monotonic()
                api._leave()

        def _answer(self, r: Reply, request: Any) -> None:
            if r.hang:
                api.stopping.wait()
                self.close_connection = True
                return
            if r.delay:
                api.stopping.wait(r.delay)
            if r.drop:
                self.close_connection = True
                return
            if r.raw is not None:
                payload = r.raw.encode() if isinstance(r.raw, str) else r.raw
                ctype = "text/html"
            elif (r.body is None and r.error is None and streams(request)
                  and self.path.split("?")[0].endswith(ANTHROPIC_PATH)):
                payload = sse(anthropic_events(r, request))
                ctype = "text/event-stream"
            else:
                if r.body is not None:
                    doc = r.body
                elif self.path.split("?")[0].endswith(ANTHROPIC_PATH):
                    doc = anthropic_body(r, request)
                elif self.path.split("?")[0].endswith(OPENAI_PATH):
                    doc = openai_body(r, request)
                else:
                    doc = {"error": {"message": f"no route {self.path}", "type": "not_found"}}
                    r = Reply(status=404)
                payload = json.dumps(doc).encode()
                ctype = "application/json"
            try:
                self.send_response(r.status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(payload)))
                for k, v in r.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                if r.cut is not None:
                    self._reset(payload[:r.cut])
                elif r.trickle is not None or r.stall:
                    self._never_end(payload[:-1] if r.trickle is not None else b"", r.trickle or 0.0)
                else:
                    self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test): nothing to answer to

        def _reset(self, part: bytes) -> None:
            """Send part of the body, then an RST (not a clean FIN): a connection reset mid-body."""
            self.wfile.write(part)
            self.wfile.flush()
            # a zero linger makes close() abort the connection
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            # the socket really closes (and the RST goes out) when the handler closes its files
            self.connection.close()

        def _never_end(self, part: bytes, interval: float) -> None:
            """Send `part` a byte at a time, then hold the connection open, sending nothing."""
            self.close_connection = True
            for i in range(len(part)):
                if api.stopping.wait(interval):
                    return
                self.wfile.write(part[i:i + 1])
                self.wfile.flush()
            # a read here ends when the client closes its side (b"") or the server stops
            self.connection.settimeout(0.05)
            while not api.stopping.is_set():
                try:
                    if not self.connection.recv(1):
                        return
                except TimeoutError:
                    continue

    return Handler


# Named apart from the fixture so a module can import it (`from fakeapi import fake_api_fixture`)
# without every test's `fake_api` parameter shadowing the import (ruff F811).
@pytest.fixture(name="fake_api")
def fake_api_fixture() -> Iterator[FakeAPI]:
    """A started fake API, stopped after the test."""
    api = FakeAPI().start()
    try:
        yield api
    finally:
        api.stop()


@pytest.fixture(name="refused_url")
def refused_url_fixture() -> Iterator[str]:
    """A loopback base URL where nothing listens: a connect is refused at once.

    The port is held bound but never listening, so no other process can take it meanwhile.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        sock.close()


# a model that reads the tools' descriptions --------------------------------------------
_STOP_WORDS = frozenset({"a", "an", "the", "of", "by", "for", "to", "and", "or", "in", "on", "its",
                         "it", "is", "what", "who", "which", "with", "from", "this", "that", "me"})


def _words(text: str) -> set[str]:
    import re

    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP_WORDS}


@dataclass
class WordModel:
    """A fake model whose choice depends on the words of the tools' descriptions: it calls
    the offered tool whose description shares the most words with the question (a tie goes
    to the tool offered first; no shared word: it answers in text). Set as a FakeAPI
    ``handler``; it reads both wire formats (Anthropic and OpenAI).

    ``deaf`` is a model update: words it no longer weighs, in questions and descriptions
    alike, whatever the tools say. ``asked`` counts the calls it answered.
    """

    deaf: set[str] = field(default_factory=set)
    asked: int = 0

    @staticmethod
    def offered(body: Any) -> list[tuple[str, str]]:
        """(name, description) of each offered tool, in order."""
        out = []
        for tool in body.get("tools") or ():
            fn = tool.get("function", tool)  # OpenAI nests the function
            out.append((str(fn.get("name")), str(fn.get("description") or "")))
        return out

    @staticmethod
    def question(body: Any) -> str:
        for message in reversed(body.get("messages") or ()):
            if message.get("role") != "user":
                continue
            content = message.get("content")
            if isinstance(content, str):
                return content
            return " ".join(str(b.get("text", "")) for b in content or () if isinstance(b, dict))
        return ""

    def choose(self, question: str, tools: list[tuple[str, str]]) -> str | None:
        asked = _words(question) - self.deaf
        best, score = None, 0
        for name, description in tools:
            shared = len(asked & (_words(description) - self.deaf))
            if shared > score:
                best, score = name, shared
        return best

    def __call__(self, body: Any) -> Reply:
        self.asked += 1
        name = self.choose(self.question(body), self.offered(body))
        if name is None:
            return Reply(text="None of these tools fits.", input_tokens=1000, output_tokens=100)
        return Reply(tool_calls=[(name, {})], input_tokens=1000, output_tokens=100)
