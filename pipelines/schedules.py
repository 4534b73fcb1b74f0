"""The nightly schedule: yesterday's daily audit, then (through ``judged_after_daily``) yesterday
under every registered codebook.

02:00 UTC by default. ``CITEAUDIT_NIGHTLY_CRON`` (a cron expression) and
``CITEAUDIT_NIGHTLY_TIMEZONE`` (an IANA zone) change it; they are read when the code location
loads, so restart ``dagster dev`` / the daemon after changing them.

The schedule launches ``daily_audit`` for yesterday; the ``judged_after_daily`` run-status
sensor launches ``judged_audit`` for yesterday × every registered codebook (and the answer dates
whose alignment window reaches yesterday's crawl) once that run succeeded. Launching both at
02:00 would race: the judged stages read the daily parquet files of the same date.
"""

from __future__ import annotations

import datetime as dt
import os

import dagster as dg

from citeaudit import layout, storage
from pipelines import partitions
from pipelines.jobs import DERIVED_TAG, RAW_TAG, TRIGGER_TAG, daily_audit
from pipelines.resources import PathsResource
from pipelines.sensors import automation_status

DEFAULT_CRON = "0 2 * * *"
DEFAULT_TIMEZONE = "UTC"


def nightly_cron() -> str:
    """The cron expression of the nightly run (CITEAUDIT_NIGHTLY_CRON, default 02:00)."""
    return os.environ.get("CITEAUDIT_NIGHTLY_CRON", "").strip() or DEFAULT_CRON


def nightly_timezone() -> str:
    """The time zone of the cron expression (CITEAUDIT_NIGHTLY_TIMEZONE, default UTC)."""
    return os.environ.get("CITEAUDIT_NIGHTLY_TIMEZONE", "").strip() or DEFAULT_TIMEZONE


def yesterday(scheduled: dt.datetime) -> str:
    """The observation date a tick audits: the calendar day before the tick, in its zone."""
    return (scheduled.date() - dt.timedelta(days=1)).isoformat()


@dg.schedule(
    name="nightly_audit",
    cron_schedule=nightly_cron(),
    execution_timezone=nightly_timezone(),
    job=daily_audit,
    default_status=dg.DefaultScheduleStatus(automation_status().value),
    description="Yesterday's daily audit; judged_after_daily follows with every codebook.",
)
def nightly_audit(
    context: dg.ScheduleEvaluationContext, paths: PathsResource
) -> dg.RunRequest | dg.SkipReason:
    """Request ``daily_audit`` for yesterday, or skip with the reason when it has no input."""
    date = yesterday(context.scheduled_execution_time)
    dates, _strays = layout.discover_dates(paths.raw)
    if date not in dates:
        return dg.SkipReason(f"no answers/{date}/ or warc/{date}/ folder under {paths.raw}")
    # The date partitions are the data's dates (pipelines.partitions): a new night's date is
    # registered before its run is requested.
    partitions.register(context.instance, dates=[date])
    return dg.RunRequest(
        run_key=f"nightly:{date}",
        partition_key=date,
        tags={TRIGGER_TAG: "nightly_audit", DERIVED_TAG: str(paths.derived),
              RAW_TAG: storage.uri(paths.raw)},
    )


SCHEDULES = (nightly_audit,)
