"""Jobs: the daily audit of one observation date, the judged audit of one date × codebook, and
the catalog rebuild. Stages join a job by their asset group, so a new stage needs no edit here.

The daily and judged jobs take the code location's executor (``build_defs(executor=...)``):
in-process by default, Celery workers when configured (``pipelines.distributed``). The catalog
and the raw-folder check always run in the launching process.
"""

from __future__ import annotations

import dagster as dg

# Run tags: what launched a run, and the codebook file's SHA-256 a judged run computed with.
TRIGGER_TAG = "citeaudit/trigger"
CODEBOOK_SHA_TAG = "citeaudit/codebook_sha256"
# The derived folder a run wrote into: one Dagster instance may hold runs of many folders
# (DAGSTER_HOME is shared by the Makefile and by users), so every reader filters by it.
DERIVED_TAG = "citeaudit/derived"
# The raw folder a run read: a date whose latest daily run read this raw folder, and which the
# folder no longer holds, lost its answers here (a re-import moved them): `citeaudit run`
# removes its outputs (pipelines.runner.prune_orphans). A date built from another raw folder
# is never removed by a run over this one.
RAW_TAG = "citeaudit/raw"

# Date-partitioned stages that need no judgment: the same for every codebook.
DAILY_GROUPS = ("ingest", "archive", "citations")
# Date × codebook stages: everything whose result depends on the codebook version.
JUDGED_GROUPS = ("alignment", "support", "scholarly", "source_risk", "metrics", "comparisons",
                 "report")
# Unpartitioned assets of the daily groups: the whole raw folder, run with the catalog.
RAW_WIDE = ("ignored_inputs",)

daily_audit = dg.define_asset_job(
    "daily_audit",
    selection=dg.AssetSelection.groups(*DAILY_GROUPS) - dg.AssetSelection.assets(*RAW_WIDE),
    description="Every date-partitioned asset for one observation date.",
)

judged_audit = dg.define_asset_job(
    "judged_audit",
    selection=dg.AssetSelection.groups(*JUDGED_GROUPS),
    description="Every date × codebook asset for one observation date under one codebook.",
)

catalog_job = dg.define_asset_job(
    "rebuild_catalog",
    selection=dg.AssetSelection.groups("catalog"),
    executor_def=dg.in_process_executor,
)

inputs_job = dg.define_asset_job(
    "check_inputs",
    selection=dg.AssetSelection.assets(*RAW_WIDE),
    description="What under the raw folder is not read (ignored_inputs); first in every run.",
    executor_def=dg.in_process_executor,
)

JOBS = (daily_audit, judged_audit, catalog_job, inputs_job)
