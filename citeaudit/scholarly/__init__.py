"""L3 scholarly metadata checks (seed 002 §4.4): DOIs, Crossref/OpenAlex records, comparison.

``doi`` extracts and normalizes identifiers, ``records`` reads registry JSON into comparable
fields, ``compare`` decides a verdict, ``transport``/``clients`` talk to the registries through
the real crossrefapi and pyalex clients, ``cache`` keeps what was fetched, ``mirror`` is a
loopback registry for tests and the offline demo, ``check`` ties them together.
"""
