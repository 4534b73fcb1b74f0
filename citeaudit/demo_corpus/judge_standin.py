"""A STAND-IN for an LLM judge endpoint: a loopback OpenAI-compatible chat-completions server.

It is not a model. It answers ``POST .../chat/completions`` the way an OpenAI-compatible server
does (a ``chat.completion`` object with ``choices[0].message.content`` and ``usage``), with a
label chosen by a ``policy``: a function of the claim and passage the request carries (and how
many times that claim was asked) that returns the reply to send — a label, a fault (an HTTP
status with headers, a delay past the client's timeout, a malformed body) or both. The tests
use it to put the ``llm`` grader through real HTTP with the official ``openai`` SDK; the demo
uses :func:`agreeing_policy`: labels that agree with the demo's planted truth at a set rate
(85%), so the report can show what a grader that tracks people does to the interval.
It listens on 127.0.0.1 only.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from citeaudit.codebook import SUPPORT_LABELS

MODEL = "citeaudit-judge-stand-in"
_CLAIM = re.compile(r"^Claim:\n(.*?)\n\nPassage:\n(.*)$", re.S)


@dataclass
class Reply:
    """What the stand-in sends: ``label`` and ``confidence`` as a well-formed reply, or
    ``content`` verbatim as the message, or ``status`` ≠ 200 (with ``headers``), after
    ``delay`` seconds; ``body`` replaces the whole HTTP body when set."""

    label: str | None = None
    confidence: float = 0.9
    content: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    body: bytes | None = None


Policy = Callable[[str, str, int], Reply]


def completion(content: str, prompt_tokens: int = 120, completion_tokens: int = 12) -> bytes:
    """A chat.completion body carrying ``content`` as the assistant's message."""
    return json.dumps({
        "id": "chatcmpl-standin", "object": "chat.completion", "created": 0, "model": MODEL,
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }, sort_keys=True).encode("utf-8")


class JudgeStandIn:
    """The server; ``with JudgeStandIn(policy) as s: s.base_url`` (``.../v1``)."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.asked: Counter[str] = Counter()  # requests per claim
        self.requests = 0
        self._lock = threading.Lock()
        self._server: http.server.ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if not self.path.endswith("/chat/completions"):
                    self._send(404, {}, b'{"error": "not found"}')
                    return
                try:
                    req = json.loads(body)
                    user = req["messages"][-1]["content"]
                    m = _CLAIM.match(user)
                    claim, passage = (m.group(1), m.group(2)) if m else (user, "")
                except (ValueError, KeyError, IndexError, TypeError):
                    self._send(400, {}, b'{"error": "bad request"}')
                    return
                with outer._lock:
                    outer.asked[claim] += 1
                    outer.requests += 1
                    n = outer.asked[claim]
                reply = outer.policy(claim, passage, n)
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.body is not None:
                    self._send(reply.status, reply.headers, reply.body)
                elif reply.status != 200:
                    self._send(reply.status, reply.headers,
                               json.dumps({"error": {"message": f"stand-in {reply.status}"}})
                               .encode())
                else:
                    content = reply.content if reply.content is not None else json.dumps(
                        {"label": reply.label, "confidence": reply.confidence})
                    self._send(200, reply.headers, completion(content))

            def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (its timeout): nothing to answer

        return Handler

    def __enter__(self) -> JudgeStandIn:
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()


def agreeing_policy(truth: dict[str, str], agreement: float = 0.85, seed: int = 7) -> Policy:
    """Labels that agree with ``truth`` ({claim text: label}) on a fixed ``agreement`` share
    of claims (chosen by a hash of the claim and ``seed``); the others get another label.
    A claim the truth does not know is ``unresolved``."""

    def policy(claim: str, passage: str, n: int) -> Reply:
        want = truth.get(claim)
        if want is None:
            return Reply(label="unresolved", confidence=0.3)
        h = hashlib.sha256(f"{seed}:{claim}".encode()).digest()
        if int.from_bytes(h[:4], "big") / 2**32 < agreement:
            return Reply(label=want, confidence=0.9)
        others = [x for x in SUPPORT_LABELS[:3] if x != want]
        return Reply(label=others[h[4] % len(others)], confidence=0.6)

    return policy
