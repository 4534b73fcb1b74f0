"""``citeaudit collect --engine E --queries PANEL --out RAW``: ask an engine a panel of queries.

Each query goes through the vendor's official SDK with web search on: ``openai`` (Responses
API, ``web_search`` tool), ``google-genai`` (``google_search`` tool), ``anthropic``
(``web_search`` server tool) and Perplexity's OpenAI-compatible chat endpoint (``openai`` SDK).
The API key comes from the environment (``OPENAI_API_KEY``, ``GEMINI_API_KEY``,
``ANTHROPIC_API_KEY``, ``PERPLEXITY_API_KEY``); ``--base-url`` points the SDK elsewhere (a
proxy, or a loopback replay server in tests). Requests run with bounded concurrency; the SDKs
retry 429 and 5xx with backoff (``--retries``). Each HTTP body is kept verbatim as
``responses/<engine>/<date>/<panel>/<query_id>.json`` and imported as in ``citeaudit
import``; an API error is logged per query with its status (on stderr and in
``responses/<engine>/<date>/<panel>.errors.jsonl``) and the panel goes on. The SDKs are the
optional extra ``collect``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from citeaudit.imports import engines
from citeaudit.imports.engines import Query
from citeaudit.imports.panels import read_panel


@dataclass(frozen=True)
class Engine:
    """How to ask one engine: the import format, key variable, default model and base URL."""

    fmt: str
    key_env: str
    model: str
    base_url: str | None


ENGINES = {
    "openai": Engine("openai", "OPENAI_API_KEY", "gpt-5-mini", None),
    "gemini": Engine("gemini", "GEMINI_API_KEY", "gemini-2.5-flash", None),
    "anthropic": Engine("anthropic", "ANTHROPIC_API_KEY", "claude-sonnet-4-5", None),
    "perplexity": Engine("perplexity", "PERPLEXITY_API_KEY", "sonar", "https://api.perplexity.ai"),
}


class CollectError(RuntimeError):
    """A query the engine did not answer: HTTP status (None if no response) and message."""

    def __init__(self, status: int | None, message: str) -> None:
        super().__init__(message)
        self.status = status


def make_asker(name: str, api_key: str, model: str, base_url: str | None, retries: int,
               timeout: float):
    """A function query text -> raw HTTP body (bytes), built on the vendor's SDK."""
    eng = ENGINES[name]
    base_url = base_url or eng.base_url
    if name in ("openai", "perplexity"):
        import openai

        client = openai.OpenAI(api_key=api_key, base_url=base_url, max_retries=retries,
                               timeout=timeout)

        def ask(text: str) -> str:
            try:
                if name == "openai":
                    raw = client.responses.with_raw_response.create(
                        model=model, input=text, tools=[{"type": "web_search"}])
                else:
                    raw = client.chat.completions.with_raw_response.create(
                        model=model, messages=[{"role": "user", "content": text}])
            except openai.APIStatusError as exc:
                raise CollectError(exc.status_code, str(exc)) from exc
            except openai.APIError as exc:
                raise CollectError(None, str(exc)) from exc
            return raw.http_response.content
        return ask
    if name == "anthropic":
        import anthropic

        client = anthropic.Anthropic(api_key=api_key, base_url=base_url, max_retries=retries,
                                     timeout=timeout)

        def ask(text: str) -> str:
            try:
                raw = client.messages.with_raw_response.create(
                    model=model, max_tokens=2048, messages=[{"role": "user", "content": text}],
                    tools=[{"type": "web_search_20250305", "name": "web_search", "max_uses": 5}])
            except anthropic.APIStatusError as exc:
                raise CollectError(exc.status_code, str(exc)) from exc
            except anthropic.APIError as exc:
                raise CollectError(None, str(exc)) from exc
            return raw.http_response.content
        return ask
    try:
        import httpx
    except ImportError:  # some installs carry the drop-in fork under its own name
        import httpx2 as httpx
    from google import genai
    from google.genai import errors, types

    # The SDK parses the body into objects; the bytes on the wire are kept from httpx, per
    # thread (a sync client runs its hooks in the calling thread; the last try is the answer).
    last = threading.local()

    def keep(response) -> None:
        response.read()
        last.body = response.content

    options = types.HttpOptions(
        base_url=base_url, timeout=int(timeout * 1000),
        httpx_client=httpx.Client(timeout=timeout, event_hooks={"response": [keep]}),
        retry_options=types.HttpRetryOptions(attempts=retries + 1,
                                             http_status_codes=[408, 429, 500, 502, 503, 504]))
    client = genai.Client(api_key=api_key, http_options=options)
    config = types.GenerateContentConfig(tools=[types.Tool(google_search=types.GoogleSearch())])

    def ask(text: str) -> bytes:
        last.body = None
        try:
            client.models.generate_content(model=model, contents=text, config=config)
        except errors.APIError as exc:
            raise CollectError(exc.code, str(exc)) from exc
        if last.body is None:
            raise CollectError(None, "no response body was seen")
        return last.body
    return ask


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def collect(name: str, panel: Path, out: Path, *, ask, engine_label: str | None = None,
            concurrency: int = 4, log=print) -> dict:
    """Ask every query of the panel, keep each body, import them; returns counts."""
    eng = ENGINES[name]
    queries = read_panel(panel)
    day = dt.datetime.now(dt.UTC).date().isoformat()
    folder = f"{engines.RESPONSES_DIR}/{name}/{day}/{panel.stem}"

    def one(item: tuple[int, Query]) -> tuple[Query, bytes | None, str, CollectError | None]:
        k, q = item
        try:
            body = ask(q.query_text)
        except CollectError as exc:
            err = exc
        except Exception as exc:  # noqa: BLE001 (one query's failure must not stop the panel)
            err = CollectError(None, f"{type(exc).__name__}: {exc}")
        else:
            log(f"[{k}/{len(queries)}] {q.query_id}: {len(body):,} bytes")
            return q, body, _now(), None
        log(f"[{k}/{len(queries)}] {q.query_id}: error status={err.status}: {str(err)[:200]}")
        return q, None, _now(), err

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        results = list(pool.map(one, enumerate(queries, start=1)))
    outcomes, errors = [], []
    for q, body, received, err in results:
        if err is not None:
            errors.append({"query_id": q.query_id, "status": err.status, "error": str(err)[:500]})
            continue
        kept = f"{folder}/{q.query_id}.json"
        engines.atomic_write(out / kept, body)
        o = engines.convert(eng.fmt, engines.decoded(body), line=1,
                            engine=engine_label or name, observed_at=None, query=q,
                            origin={"file": kept, "panel": panel.stem}, received_at=received)
        o.file = kept
        outcomes.append(o)
        if o.answer is None:
            log(f"{q.query_id}: rejected: " + ", ".join(d.reason for d in o.defects))
    err_path = out / f"{engines.RESPONSES_DIR}/{name}/{day}/{panel.stem}.errors.jsonl"
    if errors:
        engines.atomic_write(err_path, "".join(json.dumps(e) + "\n" for e in errors).encode())
    elif err_path.exists():
        err_path.unlink()  # a rerun without errors leaves no stale log
    counts = engines.write_outcomes(out, eng.fmt, f"{folder}/",
                                   f"{engine_label or name}-{panel.stem}-{day}", outcomes)
    engines.ensure_codebook(out)
    return {"engine": engine_label or name, "panel": panel.stem, "queries": len(queries),
            "errors": len(errors), **counts}


def _cmd(args: argparse.Namespace) -> int:
    eng = ENGINES[args.engine]
    key = os.environ.get(eng.key_env)
    if not key:
        print(f"error: set {eng.key_env} to the {args.engine} API key", file=sys.stderr)
        return 2
    try:
        ask = make_asker(args.engine, key, args.model or eng.model, args.base_url, args.retries,
                         args.timeout)
    except ImportError as exc:
        print(f"error: {exc.name} is missing: pip install 'citeaudit[collect]'", file=sys.stderr)
        return 2
    result = collect(args.engine, args.queries, args.out, ask=ask, engine_label=args.label,
                     concurrency=args.concurrency,
                     log=lambda m: print(m, file=sys.stderr, flush=True))
    print(json.dumps(result, sort_keys=True))
    print(f"next: citeaudit run --raw {args.out} --derived <DERIVED>")
    return 0


def register_cli(subparsers: argparse._SubParsersAction) -> None:
    """Add ``collect`` to a ``citeaudit`` argument parser."""
    p = subparsers.add_parser(
        "collect", help="ask an engine each query of a panel (vendor SDK, web search on) and "
                        "import the answers",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None)
    p.add_argument("--engine", choices=sorted(ENGINES), required=True)
    p.add_argument("--queries", type=Path, required=True, metavar="PANEL",
                   help="panel file: JSONL (query / prompt_text) or one query a line")
    p.add_argument("--out", type=Path, required=True, metavar="RAW", help="raw folder to write")
    p.add_argument("--model", help="model id (default: " + ", ".join(
        f"{k} {e.model}" for k, e in sorted(ENGINES.items())) + ")")
    p.add_argument("--base-url", help="API base URL (default: the vendor's)")
    p.add_argument("--label", metavar="NAME", help="engine name on the answers (default: E)")
    p.add_argument("--concurrency", type=int, default=4, help="requests in flight (default 4)")
    p.add_argument("--retries", type=int, default=3,
                   help="retries on 429/5xx and connection errors, with backoff (default 3)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per request")
    p.set_defaults(func=_cmd)
