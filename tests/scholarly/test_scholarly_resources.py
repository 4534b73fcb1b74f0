"""The registry resources and where a run's clients point (official, mirror, demo, offline)."""

from __future__ import annotations

import json

from citeaudit.demo_corpus.registry import REAL_MESSAGES, crossref_body, openalex_body
from citeaudit.scholarly import endpoints
from pipelines.resources import CrossrefResource, OpenAlexResource, registries_from_env


def test_resources_read_base_url_and_mailto_from_the_environment(monkeypatch):
    monkeypatch.setenv("CITEAUDIT_CROSSREF_URL", "https://mirror.example.org/crossref")
    monkeypatch.setenv("CITEAUDIT_OPENALEX_URL", "offline")
    monkeypatch.setenv("CITEAUDIT_MAILTO", "audit@example.org")
    res = registries_from_env()
    cr, oa = res["crossref"].registry_settings(), res["openalex"].registry_settings()
    assert (cr.registry, cr.base_url, cr.mailto) == ("crossref",
                                                     "https://mirror.example.org/crossref",
                                                     "audit@example.org")
    assert (oa.registry, oa.base_url) == ("openalex", "offline")
    assert CrossrefResource().registry_settings().max_retries == 3
    oa_default, cr_default = (OpenAlexResource().registry_settings(),
                              CrossrefResource().registry_settings())
    assert (oa_default.requests_per_second, oa_default.list_requests_per_second) == (10.0, 10.0)
    assert (cr_default.requests_per_second, cr_default.list_requests_per_second,
            cr_default.concurrency) == (10.0, 3.0, 2)


def test_demo_registry_is_served_only_when_no_base_url_is_configured(tmp_path):
    root = tmp_path / "registry"
    for reg in ("crossref", "openalex"):
        (root / reg / "works").mkdir(parents=True)
    msg = REAL_MESSAGES[5]  # 10.7554/elife.01567
    (root / "crossref" / "works" / "w.json").write_text(json.dumps(crossref_body(msg)))
    (root / "openalex" / "works" / "w.json").write_text(json.dumps(openalex_body(msg, 1)))
    demo = (endpoints.RegistrySettings("crossref"), endpoints.RegistrySettings("openalex"))
    with endpoints.open_clients(tmp_path, *demo) as opened:
        assert opened.modes == {"crossref": "demo_loopback", "openalex": "demo_loopback"}
        assert opened.clients["crossref"].work("10.7554/eLife.01567").outcome == "found"
        assert opened.clients["openalex"].work("10.7554/elife.01567").outcome == "found"
        assert opened.clients["crossref"].work("10.5555/none").outcome == "not_found"
        assert opened.stats()["crossref_requests"] == 2
    mixed = (endpoints.RegistrySettings("crossref", base_url="offline"),
             endpoints.RegistrySettings("openalex", base_url="http://127.0.0.1:9/openalex"))
    with endpoints.open_clients(tmp_path, *mixed) as opened:
        assert opened.modes == {"crossref": "offline", "openalex": "mirror"}
        assert set(opened.clients) == {"openalex"}
    with endpoints.open_clients(tmp_path / "elsewhere", *demo) as opened:
        # No registry/ and nothing configured: offline, no client, no request ever made.
        assert opened.modes == {"crossref": "offline", "openalex": "offline"}
        assert opened.clients == {}
    online = (endpoints.RegistrySettings("crossref", base_url="official"),
              endpoints.RegistrySettings("openalex", base_url="official"))
    with endpoints.open_clients(tmp_path / "elsewhere", *online) as opened:
        assert opened.modes == {"crossref": "official", "openalex": "official"}
        assert opened.clients["crossref"].session.base_url == "https://api.crossref.org"
