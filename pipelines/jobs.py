"""Jobs: the daily audit of one observation date, and the catalog rebuild."""

from __future__ import annotations

import dagster as dg

DAILY_GROUPS = ("ingest", "archive", "citations")

daily_selection = dg.AssetSelection.groups(*DAILY_GROUPS)

daily_audit = dg.define_asset_job(
    "daily_audit",
    selection=daily_selection,
    description="Every date-partitioned asset for one observation date, in one process.",
    executor_def=dg.in_process_executor,
)

catalog_job = dg.define_asset_job(
    "rebuild_catalog",
    selection=dg.AssetSelection.groups("catalog"),
    executor_def=dg.in_process_executor,
)
