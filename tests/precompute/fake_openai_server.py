"""A scriptable OpenAI-compatible ``/v1/chat/completions`` server for tests and the bench.

Why hand-rolled on asyncio streams (stdlib only): it must inject faults an ordinary framework
hides (connection resets mid-request, bodies that are not JSON, sleeping past the client's
timeout) and sustain hundreds of keep-alive requests per second for `bench/collect.py`.

Behaviour per request is chosen by `script`: a mapping from a substring of the last user
message to a list of `Action`s, consumed one per attempt (the last one repeats). Unscripted
requests get a deterministic ``### <n> INR`` answer after `latency` seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Literal

ActionKind = Literal["ok", "status", "timeout", "reset", "malformed", "empty", "length"]


@dataclass(frozen=True)
class Action:
    kind: ActionKind
    status: int = 200
    retry_after: str | None = None
    content: str | None = None
    delay_s: float = 0.0
    echo_auth: bool = False  # error body repeats the Authorization header (a leaky provider)
    # (kind "ok") also puts it into every other text field of the answer
    finish_reason: str | None = None  # kind "empty": the finish_reason sent (default "length")


@dataclass(frozen=True)
class Received:
    """One request as the server saw it."""

    t: float
    user: str
    body: dict[str, Any]
    authorization: str


def default_answer(user: str) -> str:
    n = int(hashlib.sha256(user.encode()).hexdigest()[:8], 16) % 9_000_000 + 1_000_000
    return f"### {n} INR"


@dataclass
class FakeOpenAIServer:
    """Run with `with FakeOpenAIServer(...) as srv:` (a background thread) or `serve_forever`."""

    latency_s: float = 0.0
    script: dict[str, list[Action]] = field(default_factory=dict)
    host: str = "127.0.0.1"
    port: int = 0
    model_suffix: str = ""
    reasoning_content: str | None = None
    received: list[Received] = field(default_factory=list)
    _attempts: dict[str, int] = field(default_factory=dict)
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    _server: asyncio.base_events.Server | None = None
    _ready: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def count(self, substring: str | None = None) -> int:
        with self._lock:
            if substring is None:
                return len(self.received)
            return sum(1 for r in self.received if substring in r.user)

    def times(self, substring: str) -> list[float]:
        with self._lock:
            return [r.t for r in self.received if substring in r.user]

    def _choose(self, user: str) -> Action:
        for key, actions in self.script.items():
            if key in user:
                with self._lock:
                    n = self._attempts.get(key, 0)
                    self._attempts[key] = n + 1
                return actions[min(n, len(actions) - 1)]
        return Action("ok")

    def _completion(self, body: dict[str, Any], content: str | None, finish: str,
                    echo: str = "") -> bytes:
        user = _last_user(body)
        payload: dict[str, Any] = {
            "id": "chatcmpl-" + hashlib.sha256(user.encode()).hexdigest()[:12] + echo,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": str(body.get("model", "")) + self.model_suffix + echo,
            "system_fingerprint": "fp_fake_0001" + echo,
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish,
            }],
            "usage": {
                "prompt_tokens": sum(len(m.get("content") or "") for m in body["messages"]) // 4,
                "completion_tokens": len(content or "") // 4 + 1,
                "total_tokens": 0,
            },
        }
        if self.reasoning_content is not None or echo:
            payload["choices"][0]["message"]["reasoning_content"] = (
                (self.reasoning_content or "") + echo)
        return json.dumps(payload).encode()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        k, v = line.split(":", 1)
                        headers[k.strip().lower()] = v.strip()
                length = int(headers.get("content-length", "0"))
                raw = await reader.readexactly(length) if length else b""
                if method == "GET" and path.rstrip("/").endswith("/models"):
                    await _send(writer, 200, b'{"object":"list","data":[{"id":"fake"}]}')
                    continue
                body = json.loads(raw or b"{}")
                user = _last_user(body)
                with self._lock:
                    self.received.append(Received(time.time(), user, body,
                                                  headers.get("authorization", "")))
                action = self._choose(user)
                if action.kind == "reset":
                    sock = writer.get_extra_info("socket")
                    if sock is not None:  # RST instead of FIN: SO_LINGER 0
                        import socket
                        import struct
                        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                        struct.pack("ii", 1, 0))
                    writer.transport.abort()
                    return
                delay = action.delay_s if action.kind == "timeout" else self.latency_s
                delay = max(delay, action.delay_s)
                if delay:
                    await asyncio.sleep(delay)
                if action.kind == "status":
                    extra = {"Retry-After": action.retry_after} if action.retry_after else {}
                    msg = f"injected {action.status}"
                    if action.echo_auth:
                        msg += f" for {headers.get('authorization', '')}"
                    err = {"error": {"message": msg, "type": "fake"}}
                    await _send(writer, action.status, json.dumps(err).encode(), extra)
                elif action.kind == "malformed":
                    await _send(writer, 200, b'{"id": "x", "choices": [ {"mess')
                elif action.kind == "empty":
                    finish = action.finish_reason or "length"
                    await _send(writer, 200, self._completion(body, None, finish))
                elif action.kind == "length":
                    text = action.content if action.content is not None else "### 12"
                    await _send(writer, 200, self._completion(body, text, "length"))
                else:
                    text = action.content if action.content is not None else default_answer(user)
                    echo = headers.get("authorization", "") if action.echo_auth else ""
                    await _send(writer, 200, self._completion(body, text + echo,
                                                              "stop" + echo, echo))
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            try:
                writer.close()
            except Exception:  # closing an already-dead socket
                pass

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._handle, self.host, self.port,
                                                  backlog=1024)
        self.port = self._server.sockets[0].getsockname()[1]

    def __enter__(self) -> FakeOpenAIServer:
        self._loop = asyncio.new_event_loop()

        def run() -> None:
            assert self._loop is not None
            asyncio.set_event_loop(self._loop)
            self._loop.run_until_complete(self._start())
            self._ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name="fake-openai", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("fake server did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None and self._thread is not None
        loop = self._loop

        async def shutdown() -> None:
            if self._server is not None:
                self._server.close()
            for task in asyncio.all_tasks(loop):
                if task is not asyncio.current_task():
                    task.cancel()

        asyncio.run_coroutine_threadsafe(shutdown(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(10)

    async def serve_forever(self) -> None:
        await self._start()
        print(f"LISTENING {self.port}", flush=True)
        assert self._server is not None
        async with self._server:
            await self._server.serve_forever()

    def run(self) -> int:
        """Serve in this thread until Ctrl-C / SIGINT (for ``main``-style entry points)."""
        try:
            asyncio.run(self.serve_forever())
        except KeyboardInterrupt:
            pass
        return 0


def _last_user(body: dict[str, Any]) -> str:
    for m in reversed(body.get("messages") or []):
        if m.get("role") == "user":
            return str(m.get("content") or "")
    return ""


async def _send(writer: asyncio.StreamWriter, status: int, payload: bytes,
                extra: dict[str, str] | None = None) -> None:
    reason = {200: "OK", 429: "Too Many Requests", 500: "Internal Server Error",
              503: "Service Unavailable", 400: "Bad Request"}.get(status, "Status")
    head = [f"HTTP/1.1 {status} {reason}", "Content-Type: application/json",
            f"Content-Length: {len(payload)}", "Connection: keep-alive"]
    head += [f"{k}: {v}" for k, v in (extra or {}).items()]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + payload)
    await writer.drain()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="fake OpenAI-compatible server (tests, bench)")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--latency", type=float, default=0.0, help="seconds per response")
    args = ap.parse_args(argv)
    return FakeOpenAIServer(latency_s=args.latency, port=args.port).run()


if __name__ == "__main__":
    sys.exit(main())
