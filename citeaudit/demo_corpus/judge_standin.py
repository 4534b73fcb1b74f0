"""A STAND-IN for an LLM judge endpoint: a loopback OpenAI-compatible chat-completions server.

It is not a model. It answers ``POST .../chat/completions`` the way an OpenAI-compatible server
does (a ``chat.completion`` object with ``choices[0].message.content`` and ``usage``), with a
label chosen by a ``policy``: a function of the claim and passage the request carries, how
many times that claim was asked and the pair the ``X-Citeaudit-Pair`` header names
(``claim_id/citation_id``, which the ``llm`` grader sends beside the request) that returns the
reply to send — a label, a fault (an HTTP status with headers, a delay past the client's
timeout, a malformed body) or both. The tests use it to put the ``llm`` grader through real
HTTP with the official ``openai`` SDK; the demo (``make demo``) runs it as a process
(``python -m citeaudit.demo_corpus.judge_standin --raw RAW --url-file F``) with
:func:`agreeing_policy`: labels that agree with the demo's planted truth
(``ground_truth_support.csv``) on a set share of pairs (85%), so the report can show what a
grader that tracks people does to the interval. Its labels read nothing of the passage: they
say nothing about how well any real judge does.
It listens on 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import hashlib
import http.server
import json
import os
import re
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from citeaudit.codebook import SUPPORT_LABELS

MODEL = "citeaudit-judge-stand-in"
PAIR_HEADER = "X-Citeaudit-Pair"
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


Policy = Callable[[str, str, int, str | None], Reply]  # claim, passage, n-th ask, pair


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
                reply = outer.policy(claim, passage, n, self.headers.get(PAIR_HEADER))
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
        # polled every 0.05 s, not 0.5: __exit__ waits for the next poll
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()


def agreeing_policy(truth: dict[str, str], agreement: float = 0.85, seed: int = 7) -> Policy:
    """Labels that agree with ``truth`` ({``claim_id/citation_id``: label}) on a fixed
    ``agreement`` share of pairs (chosen by a hash of the pair and ``seed``); the others get
    another of the first three labels. A pair the truth does not know (or a request without
    the pair header) is ``unresolved``."""

    def policy(claim: str, passage: str, n: int, pair: str | None) -> Reply:
        want = truth.get(pair or "")
        if want is None:
            return Reply(label="unresolved", confidence=0.3)
        h = hashlib.sha256(f"{seed}:{pair}".encode()).digest()
        if int.from_bytes(h[:4], "big") / 2**32 < agreement:
            return Reply(label=want, confidence=0.9)
        others = [x for x in SUPPORT_LABELS[:3] if x != want]
        return Reply(label=others[h[4] % len(others)], confidence=0.6)

    return policy


def demo_truth(raw: str | os.PathLike) -> dict[str, str]:
    """{``claim_id/citation_id``: codebook-v1 label} from a demo raw folder's planted truth."""
    from citeaudit.demo_corpus.annotations import read_truth

    return {f"{c}/{t}": r["label"] for (c, t), r in read_truth(raw).items()}


def main(argv: list[str] | None = None) -> int:
    """Serve the demo's stand-in until killed: write its base URL to ``--url-file`` (so the
    caller knows the port) and its PID to ``--pid-file``; stop it with ``kill PID``."""
    p = argparse.ArgumentParser(
        prog="python -m citeaudit.demo_corpus.judge_standin",
        description="A STAND-IN for an LLM judge (not a model): a loopback OpenAI-compatible "
                    "chat-completions server whose labels agree with the demo corpus's planted "
                    "support truth on --agreement of the pairs. For make demo and tests only.")
    p.add_argument("--raw", required=True, help="the demo raw folder (ground_truth_support.csv)")
    p.add_argument("--url-file", required=True, help="write the base URL (.../v1) here")
    p.add_argument("--pid-file", help="write this process's id here")
    p.add_argument("--agreement", type=float, default=0.85,
                   help="share of pairs labelled as the planted truth (default 0.85)")
    p.add_argument("--seed", type=int, default=7, help="which pairs disagree (default 7)")
    args = p.parse_args(argv)
    if not 0.0 <= args.agreement <= 1.0:
        p.error(f"--agreement {args.agreement}: expected a share between 0 and 1")
    try:
        truth = demo_truth(args.raw)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    with JudgeStandIn(agreeing_policy(truth, args.agreement, args.seed)) as server:
        if args.pid_file:
            with open(args.pid_file, "w", encoding="utf-8") as fh:
                fh.write(f"{os.getpid()}\n")
        tmp = args.url_file + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(server.base_url + "\n")
        os.replace(tmp, args.url_file)
        print(f"judge STAND-IN (not a model; agrees with the planted truth on "
              f"{args.agreement:.0%} of {len(truth):,} pairs) at {server.base_url}, "
              f"pid {os.getpid()}", file=sys.stderr, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
