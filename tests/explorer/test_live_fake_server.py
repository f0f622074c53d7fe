"""A tiny OpenAI-compatible chat server (stdlib ``http.server`` in a thread) for the live tests.

Answers are canned per identifier: ``answers`` maps a substring of the user message to a list of
texts, consumed one per request (the last repeats), so a test can make repeats differ. Every
request is recorded (path, body, Authorization header). ``echo_auth`` makes a hostile server
that puts the caller's Authorization header into its answer; ``status`` answers every request
with that HTTP error and a message echoing the key. The tests at the bottom check the helper.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Seen:
    path: str
    body: dict[str, Any]
    authorization: str


@dataclass
class FakeChatServer:
    answers: dict[str, list[str]] = field(default_factory=dict)
    default: str = "### 100000 INR"
    echo_auth: bool = False
    echo_auth_fields: bool = False  # the header also goes into fingerprint, finish_reason, model
    status: int | None = None
    status_message: str | None = None  # the error message of `status` answers (else: the key)
    delay_s: float = 0.0
    seen: list[Seen] = field(default_factory=list)
    _counts: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _httpd: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def users(self) -> list[str]:
        with self._lock:
            return [next(m["content"] for m in s.body["messages"] if m["role"] == "user")
                    for s in self.seen]

    def _answer(self, user: str) -> str:
        for key, texts in self.answers.items():
            if key in user:
                with self._lock:
                    i = self._counts.get(key, 0)
                    self._counts[key] = i + 1
                return texts[min(i, len(texts) - 1)]
        return self.default

    def __enter__(self) -> FakeChatServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # keep test output quiet
                pass

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                try:
                    self.wfile.write(raw)
                except (BrokenPipeError, ConnectionResetError):  # client gave up (deadline)
                    pass

            def do_GET(self) -> None:  # noqa: N802 - http.server naming
                self._send(200, {"object": "list", "data": [{"id": "fake-model"}]})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                auth = self.headers.get("Authorization", "")
                with server._lock:
                    server.seen.append(Seen(self.path, body, auth))
                if server.delay_s:
                    time.sleep(server.delay_s)
                if server.status is not None:
                    message = server.status_message or (
                        f"Incorrect API key provided: {auth.removeprefix('Bearer ')}")
                    self._send(server.status, {"error": {
                        "message": message, "type": "invalid_request_error"}})
                    return
                user = next((m["content"] for m in reversed(body.get("messages", []))
                             if m.get("role") == "user"), "")
                text = server._answer(user)
                if server.echo_auth:
                    text = f"{text} (you sent {auth})"
                echo = f" {auth}" if server.echo_auth_fields else ""
                self._send(200, {
                    "id": "chatcmpl-fake" + echo, "object": "chat.completion", "created": 0,
                    "model": body.get("model", "") + echo, "system_fingerprint": "fp_fake" + echo,
                    "choices": [{"index": 0, "finish_reason": "stop" + echo,
                                 "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                })

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True,
                         name="fake-chat").start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._httpd is not None
        self._httpd.shutdown()
        self._httpd.server_close()


def _chat(url: str, user: str, key: str = "k") -> tuple[int, str]:
    req = urllib.request.Request(
        f"{url}/chat/completions",
        data=json.dumps({"model": "m", "messages": [{"role": "user", "content": user}]}).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _content(url: str, user: str, key: str = "k") -> str:
    return json.loads(_chat(url, user, key)[1])["choices"][0]["message"]["content"]


def test_fake_server_answers_per_substring_and_records_requests() -> None:
    with FakeChatServer(answers={"male": ["### 1 INR", "### 2 INR"]}) as srv:
        texts = [_content(srv.base_url, "I am male") for _ in range(3)]
        other = _content(srv.base_url, "nobody")
    assert texts == ["### 1 INR", "### 2 INR", "### 2 INR"]
    assert other == "### 100000 INR"
    assert [s.authorization for s in srv.seen] == ["Bearer k"] * 4
    assert srv.seen[0].path == "/v1/chat/completions"


def test_fake_server_hostile_modes() -> None:
    with FakeChatServer(echo_auth=True) as srv:
        text = _content(srv.base_url, "x", "sk-abc")
    assert "sk-abc" in text
    with FakeChatServer(status=401) as srv:
        status, text = _chat(srv.base_url, "x", "sk-abc")
    assert status == 401 and "sk-abc" in text
