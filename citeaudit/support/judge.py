"""The ``llm`` grader: a judge over any OpenAI-compatible chat-completions endpoint.

Hosted APIs and local servers (vLLM, llama.cpp's server, Ollama) speak the same protocol, so an
air-gapped team can run it. It is off unless configured, from the environment:

- ``CITEAUDIT_JUDGE_BASE_URL`` (e.g. ``http://127.0.0.1:8000/v1``): switches it on;
- ``CITEAUDIT_JUDGE_MODEL`` (required with it), ``CITEAUDIT_JUDGE_API_KEY`` (``unused`` by
  default: local servers ignore it);
- ``CITEAUDIT_JUDGE_TIMEOUT`` seconds per request (30), ``CITEAUDIT_JUDGE_MAX_RETRIES`` (3),
  ``CITEAUDIT_JUDGE_RATE`` requests per second (2), ``CITEAUDIT_JUDGE_CONCURRENCY`` (4),
  ``CITEAUDIT_JUDGE_PRICE_IN`` / ``_PRICE_OUT`` per million tokens (0: cost not counted).

The prompt is the codebook's ``graders.judge_prompt`` (a new prompt is a new codebook). Each
request (model, messages, parameters) has a SHA-256 digest; an accepted reply's body is kept
under ``RAW/judge_cache/<2 hex>/<digest>.json``, so a rerun or a backfill asks nothing and
reads the same bytes. The reply is parsed strictly: one JSON object with ``label`` (one of the
support rubric's five) and ``confidence`` (0 to 1), optionally ``rationale``, nothing else. A
malformed reply is a rejection with a reason, retried within ``max_retries``, and never a
label; 429 (waiting for ``Retry-After``, capped), 5xx, timeouts and connection errors are
retried too. When the tries are spent the pair is ``unresolved`` with reason
``reply_rejected`` or ``endpoint_failed`` and the last cause in ``detail``. A pair whose page
is unavailable is not sent: ``unresolved`` with the page's reason.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from citeaudit import storage
from citeaudit.codebook import SUPPORT_LABELS, Codebook
from citeaudit.support.grader_schema import SCHEMA, digest_of

NAME = "llm"
VERSION = "1.0"
CACHE_DIR = "judge_cache"
MAX_RETRY_AFTER = 30.0
MAX_TOKENS = 200
PAIR_HEADER = "X-Citeaudit-Pair"


class JudgeConfigError(ValueError):
    """The judge's environment is incomplete or malformed; the message names the variable."""


@dataclass(frozen=True)
class Settings:
    """The judge endpoint and its limits (from the environment, see the module)."""

    base_url: str
    model: str
    api_key: str = "unused"
    timeout: float = 30.0
    max_retries: int = 3
    rate: float = 2.0
    concurrency: int = 4
    price_in: float = 0.0
    price_out: float = 0.0
    cache: Path | None = None
    backoff: float = 1.0


def _env_number(env: dict[str, str], name: str, default: float, lo: float) -> float:
    text = env.get(name)
    if text is None or text == "":
        return default
    try:
        value = float(text)
    except ValueError:
        raise JudgeConfigError(f"{name}={text!r}: expected a number") from None
    if not math.isfinite(value) or value < lo:
        raise JudgeConfigError(f"{name}={text!r}: must be at least {lo}")
    return value


def settings_from_env(environ: dict[str, str] | None = None, cache: Path | None = None
                      ) -> Settings | None:
    """The judge's settings, or None when ``CITEAUDIT_JUDGE_BASE_URL`` is unset (judge off)."""
    env = dict(os.environ if environ is None else environ)
    base = env.get("CITEAUDIT_JUDGE_BASE_URL", "").strip()
    if not base:
        return None
    model = env.get("CITEAUDIT_JUDGE_MODEL", "").strip()
    if not model:
        raise JudgeConfigError("CITEAUDIT_JUDGE_MODEL is not set: name the model the judge "
                               f"endpoint {base} should use")
    return Settings(
        base_url=base, model=model,
        api_key=env.get("CITEAUDIT_JUDGE_API_KEY") or "unused",
        timeout=_env_number(env, "CITEAUDIT_JUDGE_TIMEOUT", 30.0, 0.01),
        max_retries=int(_env_number(env, "CITEAUDIT_JUDGE_MAX_RETRIES", 3, 0)),
        rate=_env_number(env, "CITEAUDIT_JUDGE_RATE", 2.0, 0.001),
        concurrency=int(_env_number(env, "CITEAUDIT_JUDGE_CONCURRENCY", 4, 1)),
        price_in=_env_number(env, "CITEAUDIT_JUDGE_PRICE_IN", 0.0, 0.0),
        price_out=_env_number(env, "CITEAUDIT_JUDGE_PRICE_OUT", 0.0, 0.0),
        cache=cache,
    )


class Rejected(ValueError):
    """A reply that is not a label: the message is the reason."""


def parse_reply(body: bytes) -> dict[str, Any]:
    """The label, confidence and token counts of a chat-completions reply body, or Rejected."""
    try:
        doc = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise Rejected(f"reply body is not JSON: {exc}") from None
    try:
        content = doc["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise Rejected("reply has no choices[0].message.content") from None
    if not isinstance(content, str):
        raise Rejected("choices[0].message.content is not text")
    try:
        answer = json.loads(content)
    except json.JSONDecodeError:
        raise Rejected(f"message is not one JSON object: {content[:80]!r}") from None
    if not isinstance(answer, dict):
        raise Rejected("message is JSON but not an object")
    extra = sorted(set(answer) - {"label", "confidence", "rationale"})
    if extra:
        raise Rejected(f"unexpected key(s) {', '.join(extra)}")
    label = answer.get("label")
    if label not in SUPPORT_LABELS:
        raise Rejected(f"label {label!r} is not one of {', '.join(SUPPORT_LABELS)}")
    conf = answer.get("confidence")
    if isinstance(conf, bool) or not isinstance(conf, int | float) or not 0 <= conf <= 1:
        raise Rejected(f"confidence {conf!r} is not a number from 0 to 1")
    usage = doc.get("usage") if isinstance(doc.get("usage"), dict) else {}
    return {"label": label, "confidence": float(conf),
            "input_tokens": int(usage.get("prompt_tokens") or 0),
            "output_tokens": int(usage.get("completion_tokens") or 0)}


def _usage(body: bytes) -> dict[str, int]:
    """The token counts of any reply body that says them (zero when it does not)."""
    try:
        usage = json.loads(body.decode("utf-8")).get("usage") or {}
        return {"input_tokens": int(usage.get("prompt_tokens") or 0),
                "output_tokens": int(usage.get("completion_tokens") or 0)}
    except (ValueError, AttributeError, TypeError):
        return {"input_tokens": 0, "output_tokens": 0}


@dataclass
class Accounting:
    """What one run of the judge cost: requests, cache hits, retries, tokens, rejections."""

    requests: int = 0
    cache_hits: int = 0
    retries: int = 0
    rejected: int = 0
    failed: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, **counts: int) -> None:
        with self.lock:
            for k, v in counts.items():
                setattr(self, k, getattr(self, k) + v)

    def as_dict(self, settings: Settings) -> dict[str, float]:
        cost = (self.input_tokens * settings.price_in +
                self.output_tokens * settings.price_out) / 1e6
        return {"requests": self.requests, "cache_hits": self.cache_hits,
                "retries": self.retries, "rejected": self.rejected, "failed": self.failed,
                "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cost": round(cost, 6)}


class _Pace:
    """At most ``rate`` request starts per second across threads."""

    def __init__(self, rate: float) -> None:
        self.gap = 1.0 / rate
        self.next = 0.0
        self.lock = threading.Lock()

    def wait(self) -> None:
        with self.lock:
            now = time.monotonic()
            start = max(now, self.next)
            self.next = start + self.gap
        if start > now:
            time.sleep(start - now)


class LLMGrader:
    """The judge as a grader (see the module)."""

    name = NAME
    version = VERSION

    def __init__(self, book: Codebook, settings: Settings) -> None:
        self.book = book
        self.settings = settings
        # the model is part of the version a reader sees (grader_version, the report's note),
        # not only of the opaque digest: "llm 1.0+<model>"
        self.version = f"{VERSION}+{settings.model}"
        self.accounting = Accounting()
        self._client: Any = None
        self._pace = _Pace(settings.rate)
        # two items may share a request (same claim, same passage): the first asks, the other
        # waits for it and reads its cached reply, so a first run labels them as a rerun would
        self._locks: dict[str, threading.Lock] = {}
        self._locks_lock = threading.Lock()

    def digest(self) -> str:
        return digest_of({"grader": self.name, "version": self.version,
                          "model": self.settings.model,
                          "prompt": self.book.graders.judge_prompt,
                          "temperature": 0, "max_tokens": MAX_TOKENS})

    def request(self, claim: str, passage: str) -> dict[str, Any]:
        """The chat-completions request of one item (what its digest is taken over)."""
        return {
            "model": self.settings.model,
            "messages": [
                {"role": "system", "content": self.book.graders.judge_prompt},
                {"role": "user", "content": f"Claim:\n{claim}\n\nPassage:\n{passage}"},
            ],
            "temperature": 0, "max_tokens": MAX_TOKENS,
            "response_format": {"type": "json_object"},
        }

    def _cache_path(self, digest: str) -> Path | None:
        if self.settings.cache is None:
            return None
        return storage.path(self.settings.cache) / digest[:2] / f"{digest}.json"

    def _client_once(self) -> Any:
        if self._client is None:
            try:
                from openai import OpenAI
            except ImportError:
                raise JudgeConfigError("the llm grader needs the openai package: pip install "
                                       "'citeaudit[collect]' (or unset "
                                       "CITEAUDIT_JUDGE_BASE_URL)") from None

            self._client = OpenAI(base_url=self.settings.base_url,
                                  api_key=self.settings.api_key,
                                  timeout=self.settings.timeout, max_retries=0)
        return self._client

    def _ask(self, req: dict[str, Any], pair: str = ""
             ) -> tuple[bytes | None, int, str | None, str | None]:
        """(accepted body or None, attempts, reason, detail): bounded retries of one request.

        ``pair`` (``claim_id/citation_id``) goes in the ``X-Citeaudit-Pair`` header: not part
        of the request's digest nor of anything a model reads, it lets a server's logs (and
        the demo's stand-in, which answers from the planted truth of each pair) tell pairs
        apart when their claim text repeats."""
        client = self._client_once()
        import openai

        reason = detail = None
        attempts = 0
        for attempt in range(self.settings.max_retries + 1):
            if attempt:
                self.accounting.add(retries=1)
            attempts += 1
            self._pace.wait()
            self.accounting.add(requests=1)
            wait = self.settings.backoff * (2 ** attempt)
            try:
                raw = client.chat.completions.with_raw_response.create(
                    **req, extra_headers={PAIR_HEADER: pair} if pair else None)
                body = raw.http_response.content
            except openai.RateLimitError as exc:
                reason, detail = "endpoint_failed", "429 rate limited"
                after = exc.response.headers.get("retry-after") if exc.response else None
                with contextlib.suppress(ValueError):
                    wait = min(float(after), MAX_RETRY_AFTER) if after else wait
            except openai.APIStatusError as exc:
                reason, detail = "endpoint_failed", f"HTTP {exc.status_code}"
                if exc.status_code < 500:
                    break  # a client error does not get better by asking again
            except openai.APITimeoutError:
                reason, detail = "endpoint_failed", f"timeout after {self.settings.timeout} s"
            except openai.APIConnectionError as exc:
                reason, detail = "endpoint_failed", f"connection error: {exc}"[:200]
            else:
                self.accounting.add(**_usage(body))  # a rejected reply was paid for too
                try:
                    parse_reply(body)
                except Rejected as exc:
                    reason, detail = "reply_rejected", str(exc)[:300]
                    self.accounting.add(rejected=1)
                else:
                    return body, attempts, None, None
            if attempt < self.settings.max_retries:
                time.sleep(min(wait, MAX_RETRY_AFTER))
        if reason == "endpoint_failed":
            self.accounting.add(failed=1)
        return None, attempts, reason, detail

    def _one(self, item: dict[str, Any]) -> dict[str, Any]:
        row = {k: item.get(k) for k in ("answer_id", "claim_id", "citation_id", "engine",
                                        "domain", "passage_text", "capture_time")}
        row.update(grader=self.name, grader_version=self.version,
                   grader_digest=self.digest(), verdict="unresolved", reason=None,
                   detail=None, confidence=None, score=None, attempts=0, input_tokens=0,
                   output_tokens=0, request_sha256=None)
        if item.get("page_reason") or item.get("n_unresolved"):
            row["reason"] = item.get("page_reason") or "not_aligned"
            return row
        if not item.get("passage_text"):
            row["reason"] = "no_passage"
            return row
        req = self.request(item.get("claim_text") or "", item["passage_text"])
        digest = digest_of(req)
        row["request_sha256"] = digest
        path = self._cache_path(digest)
        with self._locks_lock:
            lock = self._locks.setdefault(digest, threading.Lock())
        with lock:
            if path is not None and path.is_file():
                body = path.read_bytes()
                self.accounting.add(cache_hits=1)
            else:
                body, row["attempts"], reason, detail = self._ask(
                    req, f"{item.get('claim_id') or ''}/{item.get('citation_id') or ''}")
                if body is None:
                    row.update(reason=reason, detail=detail)
                    return row
                if path is not None:
                    storage.write_bytes_atomic(path, body)
        parsed = parse_reply(body)
        row.update(verdict=parsed["label"], confidence=parsed["confidence"],
                   input_tokens=parsed["input_tokens"], output_tokens=parsed["output_tokens"])
        if parsed["label"] == "unresolved":
            row["reason"] = "judge_unresolved"
        return row

    def grade(self, items: pa.Table) -> pa.Table:
        rows = items.to_pylist()
        with ThreadPoolExecutor(max_workers=self.settings.concurrency) as pool:
            out = list(pool.map(self._one, rows))
        return pa.Table.from_pylist(out, schema=SCHEMA)
