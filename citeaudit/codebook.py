"""Versioned codebooks (``codebooks/<version>.yaml``) loaded into a typed, validated model.

A codebook fixes everything a judgment-dependent number depends on: how each annotation schema's
labels map onto the support rubric's five labels (docs/references.md), the source-role
taxonomy, review-priority weights, policy thresholds, high-risk domains, the temporal alignment
window, tracking parameters, review sampling, scholarly matching thresholds and the metric
definitions. Numbers are comparable only within one version, so a version is a partition dimension.

Validation fails closed with a :class:`CodebookError` naming the file, the key path and, where
YAML knows it, the line: unknown keys, duplicate keys (a label mapped twice), weights that do not
sum to 1, labels outside the five, a version that disagrees with the file name.
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Hashable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from citeaudit import storage

SUPPORT_LABELS = (
    "fully_supported",
    "partially_supported",
    "unsupported",
    "contradicted",
    "unresolved",
)
POLICY_ACTIONS = ("PASS", "CONTEXTUALIZE", "REVIEW", "ABSTAIN")


class CodebookError(ValueError):
    """A codebook file that cannot be used; the message names file, key and line."""


@dataclass(frozen=True)
class SourceRole:
    """One source role of the source-risk specification's taxonomy, and whether the answer must
    disclose it."""

    name: str
    requires_disclosure: bool


@dataclass(frozen=True)
class Policy:
    """Policy thresholds: CONTEXTUALIZE above a priority, REVIEW unresolved, explicit ABSTAIN."""

    contextualize_above: float
    review_unresolved: bool = True
    abstain_rules: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class AlignmentWindow:
    """How far before and after the reference time a capture may lie to be aligned."""

    before_days: float = 7.0
    after_days: float = 1.0


@dataclass(frozen=True)
class ReviewSampling:
    """Share of supported items sampled into the review queue, and the sampling seed."""

    supported_rate: float = 0.1
    seed: int = 7


@dataclass(frozen=True)
class Scholarly:
    """L3 matching thresholds (rapidfuzz scores 0-100) and the registry cache refresh age."""

    title_similarity: float = 90.0
    search_similarity: float = 85.0
    year_tolerance: int = 1
    refresh_days: int = 30


@dataclass(frozen=True)
class Atomization:
    """Rules of the claim splitter (citeaudit.support.atoms), versioned with the codebook."""

    version: str = "rules-1"
    split_clauses: bool = True
    coordinators: tuple[str, ...] = (", and", ", but", ";", ", while", ", whereas", ", or",
                                     ", yet", ", so")
    min_clause_words: int = 3


@dataclass(frozen=True)
class Evidence:
    """Evidence locator settings and signal thresholds, frozen before validation.

    The coverage thresholds were set on the calibration half of ExpertQA
    (``citeaudit validate-grader expertqa``) and are reported on the held-out half.
    """

    window_sentences: int = 2
    top_k: int = 3
    bm25_k1: float = 1.2
    bm25_b: float = 0.75
    located_coverage: float = 0.2
    no_evidence_coverage: float = 0.1
    flag_names: bool = False


DEFAULT_JUDGE_PROMPT = """\
You check whether a passage of an archived web page supports a claim that an AI search answer
made while citing that page. Judge only from the passage; do not use what you know.

Labels:
- fully_supported: the passage states everything the claim says.
- partially_supported: the passage states some of the claim, not all of it.
- unsupported: the passage does not state what the claim says.
- contradicted: the passage states the opposite of the claim.
- unresolved: the passage is empty, unreadable or cannot settle it.

Reply with one JSON object and nothing else:
{"label": "<one of the five labels>", "confidence": <a number from 0 to 1>}
"""


@dataclass(frozen=True)
class Graders:
    """Which grader's labels the prediction-powered rates use (``primary``), and the LLM
    judge's prompt: part of the codebook, so a new prompt is a new codebook version."""

    primary: str = "locator"
    judge_prompt: str = DEFAULT_JUDGE_PROMPT
    # the locator grader's score: plain coverage of the claim's terms in the page, plus
    # locator_coverage_weight × the atoms' mean best-passage coverage, minus
    # locator_mismatch_penalty × the share of atoms with a hard mismatch; fully_supported at
    # or above locator_pass, unsupported below locator_fail. Set on ExpertQA's calibration
    # half (citeaudit validate-grader expertqa): weights maximizing the share of decorative
    # citations flagged when 90% of true Complete ones pass, locator_pass that 90% cut,
    # locator_fail the cut passing 98% of them.
    locator_coverage_weight: float = 0.25
    locator_mismatch_penalty: float = 0.1
    locator_pass: float = 0.296
    locator_fail: float = 0.15


GRADER_NAMES = ("locator", "llm")


@dataclass(frozen=True)
class AlertRule:
    """One alert rule (``alerts:``): fires on a ``comparisons`` row of ``metric`` (``*``: any)
    for ``engine`` (``*``: any; ``all``: all engines pooled; with ``versus``, the one pair of
    engines) in ``family`` (``*``: any) whose Holm-adjusted p-value is below ``alpha``, whose
    difference points in ``direction`` and is at least ``min_effect`` in size. ``severity`` is
    the Dagster asset check's (``error``/``warn``)."""

    name: str
    metric: str = "*"
    engine: str = "*"
    versus: str = ""
    family: str = "*"
    direction: str = "worse"
    min_effect: float = 0.0
    alpha: float = 0.05
    severity: str = "error"


ALERT_DIRECTIONS = ("worse", "better", "increase", "decrease", "either")
ALERT_SEVERITIES = ("error", "warn")
ALERT_FAMILIES = ("*", "engine_vs_engine", "vs_previous_date", "vs_baseline", "vs_codebook",
                  "vs_version")


@dataclass(frozen=True)
class Codebook:
    """One validated codebook version."""

    version: str
    description: str
    label_maps: dict[str, dict[str, str]]
    source_roles: dict[str, SourceRole]
    priority_weights: dict[str, float]
    policy: Policy
    high_risk_domains: tuple[str, ...]
    alignment_window: AlignmentWindow
    tracking_params: tuple[str, ...]
    review_sampling: ReviewSampling
    scholarly: Scholarly
    metrics: dict[str, str]
    atomization: Atomization = Atomization()
    evidence: Evidence = Evidence()
    alerts: tuple[AlertRule, ...] = ()
    graders: Graders = Graders()
    path: str = ""
    support_schema: str = ""
    sha256: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def map_label(self, schema: str, raw: str) -> str | None:
        """The support rubric's label for a raw label of ``schema``; None when the codebook has
        no mapping."""
        return self.label_maps.get(schema, {}).get(raw)

    def is_tracking_param(self, name: str) -> bool:
        """True when a query parameter name matches one of the tracking patterns (globs)."""
        low = name.lower()
        return any(fnmatch.fnmatchcase(low, pat.lower()) for pat in self.tracking_params)


TOP_KEYS = {
    "version", "description", "label_maps", "source_roles", "priority_weights", "policy",
    "high_risk_domains", "alignment_window", "tracking_params", "review_sampling", "scholarly",
    "metrics", "support_schema", "atomization", "evidence", "alerts", "graders",
}
REQUIRED_KEYS = ("version", "label_maps", "source_roles", "priority_weights", "policy")


# Limits checked while the YAML is read, before any alias is expanded into Python objects (a
# few kilobytes of nested aliases otherwise expand to gigabytes): docs/limits.md.
MAX_CODEBOOK_BYTES = 1_000_000
MAX_YAML_ALIASES = 100
MAX_YAML_NODES = 100_000
MAX_YAML_DEPTH = 32
# A codebook version is a partition value (``codebook_version=<v>``) and part of file names:
# letters, digits, ``.``, ``_`` and ``-`` only (``=``, ``/`` or a space would break the paths).
VERSION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe loader that refuses duplicate mapping keys (PyYAML keeps the last silently), and
    documents with more aliases, nodes or nesting than a codebook needs (counted on the node
    graph, before construction expands anything)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._aliases = self._nodes = self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_YAML_ALIASES:
                raise CodebookError(f"line {self.peek_event().start_mark.line + 1}: more than "
                                    f"{MAX_YAML_ALIASES} aliases (*name); a codebook needs few")
        self._nodes += 1
        if self._nodes > MAX_YAML_NODES:
            raise CodebookError(f"more than {MAX_YAML_NODES} YAML nodes")
        self._depth += 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                raise CodebookError(f"line {self.peek_event().start_mark.line + 1}: nested "
                                    f"deeper than {MAX_YAML_DEPTH} levels")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False):
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        line = key_node.start_mark.line + 1
        if not isinstance(key, Hashable) or isinstance(key, tuple):
            raise CodebookError(f"line {line}: a mapping key must be a plain value, not "
                                f"{type(key).__name__}")
        if key in seen:
            raise CodebookError(
                f"key {key!r} appears twice in one mapping (lines {seen[key]} and {line})"
            )
        seen[key] = line
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping
)


def _fail(path: str, key: str, message: str) -> CodebookError:
    return CodebookError(f"{path}: {key}: {message}")


def _mapping(doc: dict, key: str, path: str, required: bool = True) -> dict:
    value = doc.get(key)
    if value is None and not required:
        return {}
    if not isinstance(value, dict):
        raise _fail(path, key, f"expected a mapping, got {type(value).__name__}")
    return value


def _only(d: dict, allowed: set[str], path: str, where: str) -> None:
    unknown = sorted(str(k) for k in d if k not in allowed)
    if unknown:
        raise _fail(path, where, f"unknown key(s) {', '.join(unknown)}; allowed: "
                    f"{', '.join(sorted(allowed))}")


def _number(value: Any, path: str, key: str, lo: float | None = None,
            hi: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise _fail(path, key, f"expected a number, got {value!r}")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise _fail(path, key, f"{value!r} outside [{lo}, {hi}]")
    return float(value)


def _label_maps(doc: dict, path: str) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for schema, mapping in _mapping(doc, "label_maps", path).items():
        key = f"label_maps.{schema}"
        if not isinstance(mapping, dict) or not mapping:
            raise _fail(path, key, "expected a non-empty mapping of raw label -> support label "
                        f"({', '.join(SUPPORT_LABELS)})")
        for raw, label in mapping.items():
            if label not in SUPPORT_LABELS:
                raise _fail(path, f"{key}.{raw}",
                            f"{label!r} is not one of {', '.join(SUPPORT_LABELS)}")
        out[str(schema)] = {str(k): str(v) for k, v in mapping.items()}
    return out


def _weights(doc: dict, path: str) -> dict[str, float]:
    raw = _mapping(doc, "priority_weights", path)
    weights = {str(k): _number(v, path, f"priority_weights.{k}", 0.0, 1.0)
               for k, v in raw.items()}
    total = math.fsum(weights.values())
    if not weights or abs(total - 1.0) > 1e-9:
        raise _fail(path, "priority_weights", f"weights must sum to 1, they sum to {total!r}")
    return weights


def _atomization(doc: dict, path: str) -> Atomization:
    raw = _mapping(doc, "atomization", path, required=False)
    _only(raw, {"version", "split_clauses", "coordinators", "min_clause_words"}, path,
          "atomization")
    d = Atomization()
    version = raw.get("version", d.version)
    if not isinstance(version, str) or not version:
        raise _fail(path, "atomization.version", f"expected a non-empty string, got {version!r}")
    split = raw.get("split_clauses", d.split_clauses)
    if not isinstance(split, bool):
        raise _fail(path, "atomization.split_clauses", "expected true/false")
    coords = raw.get("coordinators", list(d.coordinators))
    if not isinstance(coords, list) or not all(isinstance(c, str) and c.strip()
                                               for c in coords):
        raise _fail(path, "atomization.coordinators", "expected a list of non-empty strings")
    words = _number(raw.get("min_clause_words", d.min_clause_words), path,
                    "atomization.min_clause_words", 1.0, 50.0)
    return Atomization(version, split, tuple(coords), int(words))


def _evidence(doc: dict, path: str) -> Evidence:
    raw = _mapping(doc, "evidence", path, required=False)
    d = Evidence()
    _only(raw, set(d.__dataclass_fields__), path, "evidence")
    flag = raw.get("flag_names", d.flag_names)
    if not isinstance(flag, bool):
        raise _fail(path, "evidence.flag_names", "expected true/false")
    ev = Evidence(
        int(_number(raw.get("window_sentences", d.window_sentences), path,
                    "evidence.window_sentences", 1.0, 10.0)),
        int(_number(raw.get("top_k", d.top_k), path, "evidence.top_k", 1.0, 20.0)),
        _number(raw.get("bm25_k1", d.bm25_k1), path, "evidence.bm25_k1", 0.0, 10.0),
        _number(raw.get("bm25_b", d.bm25_b), path, "evidence.bm25_b", 0.0, 1.0),
        _number(raw.get("located_coverage", d.located_coverage), path,
                "evidence.located_coverage", 0.0, 1.0),
        _number(raw.get("no_evidence_coverage", d.no_evidence_coverage), path,
                "evidence.no_evidence_coverage", 0.0, 1.0),
        flag,
    )
    if ev.no_evidence_coverage > ev.located_coverage:
        raise _fail(path, "evidence.no_evidence_coverage",
                    f"{ev.no_evidence_coverage!r} is above located_coverage "
                    f"{ev.located_coverage!r}")
    return ev


def _alerts(doc: dict, path: str) -> tuple[AlertRule, ...]:
    """The ``alerts:`` list: each rule a mapping with a metric name (or ``*``; the comparisons
    stage checks it names a metric, :func:`citeaudit.comparisons.alerts.check_rules`), a
    direction, a minimum effect >= 0 and an adjusted significance level in (0, 1); unknown keys
    and duplicate rule names are refused, naming the rule's key and the fix."""
    raw = doc.get("alerts")
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise _fail(path, "alerts", "expected a list of rules, e.g. [{metric: dead_rate, "
                    "engine: '*', direction: worse, min_effect: 0.05, alpha: 0.05}]")
    allowed = {"name", "metric", "engine", "versus", "family", "direction", "min_effect",
               "alpha", "severity"}
    rules, names = [], set()
    for i, spec in enumerate(raw):
        where = f"alerts[{i}]"
        if not isinstance(spec, dict):
            raise _fail(path, where, "expected a mapping (metric, engine, direction, "
                        "min_effect, alpha)")
        _only(spec, allowed, path, where)
        metric = spec.get("metric")
        if not isinstance(metric, str) or not metric:
            raise _fail(path, f"{where}.metric", "required: a metric name (the metrics "
                        "table's metric column, e.g. dead_rate) or '*'")
        for key, values in (("direction", ALERT_DIRECTIONS), ("severity", ALERT_SEVERITIES),
                            ("family", ALERT_FAMILIES)):
            value = spec.get(key, getattr(AlertRule, key))
            if value not in values:
                raise _fail(path, f"{where}.{key}",
                            f"{value!r} is not one of {', '.join(values)}")
        engine = spec.get("engine", "*")
        if not isinstance(engine, str) or not engine:
            raise _fail(path, f"{where}.engine", "expected an engine name, 'all' or '*'")
        versus = spec.get("versus", "")
        if not isinstance(versus, str) or (versus and engine in ("*", "all", versus)):
            raise _fail(path, f"{where}.versus", "the other engine of one pair: a name "
                        "different from engine, and engine must name one engine too")
        alpha = _number(spec.get("alpha", 0.05), path, f"{where}.alpha", 0.0, 1.0)
        if not 0.0 < alpha < 1.0:
            raise _fail(path, f"{where}.alpha", f"{alpha!r} must lie strictly between 0 and 1")
        name = spec.get("name") or f"{metric}/{engine}/{spec.get('direction', 'worse')}"
        if not isinstance(name, str) or name in names:
            raise _fail(path, f"{where}.name", f"{name!r} names two rules; give each its own "
                        "name")
        names.add(name)
        rules.append(AlertRule(
            name=name, metric=str(metric), engine=engine, versus=versus,
            family=spec.get("family", AlertRule.family),
            direction=spec.get("direction", AlertRule.direction),
            min_effect=_number(spec.get("min_effect", 0.0), path, f"{where}.min_effect", 0.0),
            alpha=alpha, severity=spec.get("severity", AlertRule.severity)))
    return tuple(rules)
def _graders(doc: dict, path: str) -> Graders:
    """The ``graders:`` section: ``primary`` (a built-in grader's name), ``judge_prompt`` and the
    locator grader's score weights and label cuts."""
    raw = _mapping(doc, "graders", path, required=False)
    numbers = ("locator_coverage_weight", "locator_mismatch_penalty", "locator_pass",
               "locator_fail")
    _only(raw, {"primary", "judge_prompt", *numbers}, path, "graders")
    d = Graders()
    primary = raw.get("primary", d.primary)
    if primary not in GRADER_NAMES:
        raise _fail(path, "graders.primary",
                    f"{primary!r} is not a grader (one of {', '.join(GRADER_NAMES)})")
    prompt = raw.get("judge_prompt", d.judge_prompt)
    if not isinstance(prompt, str) or not prompt.strip():
        raise _fail(path, "graders.judge_prompt", "expected a non-empty text")
    values = {k: _number(raw.get(k, getattr(d, k)), path, f"graders.{k}", 0.0, 2.0)
              for k in numbers}
    if values["locator_fail"] > values["locator_pass"]:
        raise _fail(path, "graders.locator_fail",
                    f"{values['locator_fail']!r} is above locator_pass {values['locator_pass']!r}")
    return Graders(primary, prompt, **values)


def validate(doc: Any, path: str, version: str | None = None) -> Codebook:
    """Check a parsed codebook document and build the typed model (``path`` for messages)."""
    if not isinstance(doc, dict):
        raise CodebookError(f"{path}: expected a mapping at the top level")
    _only(doc, TOP_KEYS, path, "(top level)")
    for key in REQUIRED_KEYS:
        if key not in doc:
            raise _fail(path, key, "required key is missing")
    name = doc["version"]
    if not isinstance(name, str) or not name:
        raise _fail(path, "version", f"expected a non-empty string, got {name!r}")
    if version is not None and name != version:
        raise _fail(path, "version", f"{name!r} does not match the file name {version!r}")

    roles = {}
    for role, spec in _mapping(doc, "source_roles", path).items():
        spec = spec or {}
        if not isinstance(spec, dict):
            raise _fail(path, f"source_roles.{role}", "expected a mapping")
        _only(spec, {"requires_disclosure"}, path, f"source_roles.{role}")
        disclose = spec.get("requires_disclosure", False)
        if not isinstance(disclose, bool):
            raise _fail(path, f"source_roles.{role}.requires_disclosure", "expected true/false")
        roles[str(role)] = SourceRole(str(role), disclose)

    pol = _mapping(doc, "policy", path)
    _only(pol, {"contextualize_above", "review_unresolved", "abstain_rules"}, path, "policy")
    if "contextualize_above" not in pol:
        raise _fail(path, "policy.contextualize_above", "required key is missing")
    rules = pol.get("abstain_rules") or []
    if not isinstance(rules, list) or not all(isinstance(r, dict) for r in rules):
        raise _fail(path, "policy.abstain_rules", "expected a list of mappings")
    review = pol.get("review_unresolved", True)
    if review is not True:
        raise _fail(path, "policy.review_unresolved",
                    "every unresolved tuple goes to REVIEW; this cannot be switched off")
    policy = Policy(_number(pol["contextualize_above"], path, "policy.contextualize_above",
                            0.0, 1.0), True, tuple(rules))

    win = _mapping(doc, "alignment_window", path, required=False)
    _only(win, {"before_days", "after_days"}, path, "alignment_window")
    window = AlignmentWindow(
        _number(win.get("before_days", 7), path, "alignment_window.before_days", 0.0),
        _number(win.get("after_days", 1), path, "alignment_window.after_days", 0.0),
    )

    samp = _mapping(doc, "review_sampling", path, required=False)
    _only(samp, {"supported_rate", "seed"}, path, "review_sampling")
    seed = samp.get("seed", 7)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise _fail(path, "review_sampling.seed", f"expected an integer, got {seed!r}")
    sampling = ReviewSampling(
        _number(samp.get("supported_rate", 0.1), path, "review_sampling.supported_rate",
                0.0, 1.0), seed)

    sch = _mapping(doc, "scholarly", path, required=False)
    _only(sch, {"title_similarity", "search_similarity", "year_tolerance", "refresh_days"},
          path, "scholarly")
    defaults = Scholarly()
    scholarly = Scholarly(
        _number(sch.get("title_similarity", defaults.title_similarity), path,
                "scholarly.title_similarity", 0.0, 100.0),
        _number(sch.get("search_similarity", defaults.search_similarity), path,
                "scholarly.search_similarity", 0.0, 100.0),
        int(_number(sch.get("year_tolerance", defaults.year_tolerance), path,
                    "scholarly.year_tolerance", 0.0)),
        int(_number(sch.get("refresh_days", defaults.refresh_days), path,
                    "scholarly.refresh_days", 0.0)),
    )

    atomization = _atomization(doc, path)
    evidence = _evidence(doc, path)

    def _strings(key: str) -> tuple[str, ...]:
        value = doc.get(key) or []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _fail(path, key, "expected a list of strings")
        return tuple(value)

    metrics = _mapping(doc, "metrics", path, required=False)
    label_maps = _label_maps(doc, path)
    support_schema = doc.get("support_schema") or ""
    if not isinstance(support_schema, str) or (support_schema and
                                               support_schema not in label_maps):
        raise _fail(path, "support_schema",
                    f"{support_schema!r} is not a schema of label_maps "
                    f"({', '.join(sorted(label_maps))})")
    return Codebook(
        version=name,
        description=str(doc.get("description") or ""),
        label_maps=label_maps,
        source_roles=roles,
        priority_weights=_weights(doc, path),
        policy=policy,
        high_risk_domains=_strings("high_risk_domains"),
        alignment_window=window,
        tracking_params=_strings("tracking_params"),
        review_sampling=sampling,
        scholarly=scholarly,
        metrics={str(k): str(v) for k, v in metrics.items()},
        atomization=atomization,
        evidence=evidence,
        alerts=_alerts(doc, path),
        graders=_graders(doc, path),
        path=path,
        support_schema=support_schema,
    )


def load(path: Path) -> Codebook:
    """Load and validate ``codebooks/<version>.yaml``; the version must match the file stem."""
    path = storage.path(path)
    if not VERSION_NAME.match(path.stem):
        raise CodebookError(f"{path}: the file name {path.name!r} cannot name a codebook version "
                            "(it becomes a partition value): use letters, digits, '.', '_' and "
                            "'-' only, e.g. codebooks/v2.yaml")
    try:
        size = path.stat().st_size
        if size > MAX_CODEBOOK_BYTES:
            raise CodebookError(f"{path}: {size:,} bytes; a codebook is at most "
                                f"{MAX_CODEBOOK_BYTES:,} (docs/limits.md)")
        data = path.read_bytes()
    except OSError as exc:
        raise CodebookError(f"{path}: cannot read: {exc.strerror}") from exc
    return _parsed(str(path), path.stem, data)


@lru_cache(maxsize=32)
def _parsed(where: str, version: str, data: bytes) -> Codebook:
    """The validated codebook these bytes of file ``where`` hold, read once per process for the
    same file and bytes (every step of a run loads its codebook; parsing took 28 ms, a tenth of a
    small step). A file edited in place has other bytes, and is read again."""
    import hashlib

    try:
        doc = load_yaml(data)
    except CodebookError as exc:
        raise CodebookError(f"{where}: {exc}") from None
    try:
        book = validate(doc, where, version=version)
    except CodebookError:
        raise
    except (TypeError, ValueError, AttributeError, KeyError, IndexError,
            OverflowError) as exc:
        # a value of a type the checks above did not expect: still the file's fault, named
        raise CodebookError(f"{where}: a value of the wrong type ({type(exc).__name__}: {exc}); "
                            "the schema is in docs/codebook.md") from None
    return _with(book, sha256=hashlib.sha256(data).hexdigest())


def load_yaml(data: bytes) -> Any:
    """A YAML document of untrusted bytes, read within the limits above (aliases, nodes and
    nesting counted before anything is expanded; duplicate keys refused); a
    :class:`CodebookError` saying why otherwise. Used for codebooks and ``citeaudit.yaml``."""
    if len(data) > MAX_CODEBOOK_BYTES:
        raise CodebookError(f"{len(data):,} bytes; at most {MAX_CODEBOOK_BYTES:,} are read "
                            "(docs/limits.md)")
    try:
        doc = yaml.load(data.decode("utf-8"), Loader=_UniqueKeyLoader)  # noqa: S506 (safe subclass)
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise CodebookError(f"not valid YAML: {exc}") from None
    except RecursionError:
        raise CodebookError("nested too deeply to read") from None
    if _expanded_size(doc, MAX_YAML_NODES) > MAX_YAML_NODES:
        raise CodebookError(f"its aliases expand to more than {MAX_YAML_NODES:,} values "
                            "(docs/limits.md); write the values out instead")
    return doc


def _expanded_size(doc: Any, limit: int) -> int:
    """How many values ``doc`` holds once every alias is expanded, counted without expanding
    and without recursion; stops counting past ``limit``."""
    count, stack = 0, [doc]
    while stack and count <= limit:
        value = stack.pop()
        count += 1
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return count


def _with(book: Codebook, **changes: Any) -> Codebook:
    from dataclasses import replace

    return replace(book, **changes)


def load_version(raw: Path, version: str) -> Codebook:
    """The codebook ``version`` of a raw folder; a clear error when it does not exist (or
    names no file of ``codebooks/``: ``../x`` never leaves the folder)."""
    if not isinstance(version, str) or not VERSION_NAME.match(version):
        raise CodebookError(f"codebook version {str(version)[:80]!r} is not a version name "
                            "(letters, digits, '.', '_', '-'); it must name codebooks/<v>.yaml "
                            "of the raw folder")
    path = storage.path(raw) / "codebooks" / f"{version}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in (storage.path(raw) / "codebooks").glob("*.yaml"))
        raise CodebookError(
            f"{path}: codebook version {version!r} does not exist "
            f"(known: {', '.join(known) or 'none'})"
        )
    return load(path)
