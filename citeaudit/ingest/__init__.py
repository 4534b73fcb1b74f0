"""Ingest: which answer lines are accepted. Every JSONL line under ``answers/<date>/`` is checked
in DuckDB SQL against the answer contract; a line with any defect is rejected whole, with file,
line, field and reason. Writes ``answers``, ``claims``, ``citations`` and ``rejected_inputs``.
"""
