"""The data dictionary (docs/tables.md) against the real schemas of a demo run, and the same
descriptions in catalog.duckdb (COMMENT ON) and in the Dagster column schemas."""

from __future__ import annotations

import dagster as dg
import duckdb

from citeaudit import catalog
from pipelines.definitions import defs


def real_schemas(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, str]]:
    rows = con.execute(
        "SELECT table_name, column_name, data_type FROM duckdb_columns() "
        "WHERE NOT internal ORDER BY table_name, column_index"
    ).fetchall()
    out: dict[str, dict[str, str]] = {}
    for table, column, kind in rows:
        out.setdefault(table, {})[column] = kind
    return out


def test_every_output_table_and_column_is_in_docs_tables_md(demo_run):
    with duckdb.connect(str(demo_run.derived / catalog.CATALOG_FILE), read_only=True) as con:
        real = real_schemas(con)
    assert "ignored_inputs" in real and "citation_existence" in real
    problems = catalog.dictionary_problems(real)
    assert not problems, "docs/tables.md is out of step with the tables:\n" + "\n".join(problems)


def test_the_check_names_what_is_missing():
    real = {"answers": {"answer_id": "VARCHAR", "query_text": "VARCHAR", "new_col": "BIGINT"},
            "brand_new_table": {"url": "VARCHAR"}}
    problems = catalog.dictionary_problems(real)
    assert "answers.new_col (BIGINT) is not described in docs/tables.md" in problems
    missing = "table brand_new_table has no '## brand_new_table' section"
    assert any(p.startswith(missing) for p in problems)
    assert "docs/tables.md describes answers.n_claims, which answers does not have" in problems


def test_catalog_and_dagster_carry_the_dictionarys_descriptions(demo_run):
    docs = catalog.dictionary()
    with duckdb.connect(str(demo_run.derived / catalog.CATALOG_FILE), read_only=True) as con:
        view = con.execute(
            "SELECT comment FROM duckdb_views() WHERE view_name = 'citation_existence'"
        ).fetchall()
        state = con.execute(
            "SELECT comment FROM duckdb_columns() WHERE table_name = 'citation_existence' "
            "AND column_name = $c", {"c": "verdict"}).fetchall()
        common = con.execute(
            "SELECT comment FROM duckdb_columns() WHERE table_name = 'answers' "
            "AND column_name = 'answer_id'").fetchall()
    assert view == [(docs["citation_existence"].description,)]
    assert state == [(docs["citation_existence"].columns["verdict"][1],)]
    assert common == [(docs[catalog.COMMON].columns["answer_id"][1],)]
    spec = defs.resolve_asset_graph().get(dg.AssetKey("citation_existence"))
    schema = spec.metadata["dagster/column_schema"]
    described = {c.name: (c.type, c.description) for c in schema.columns}
    assert described["verdict"] == docs["citation_existence"].columns["verdict"]
