"""The Celery app of citeaudit's workers: ``celery -A pipelines.celery_app worker``.

Built from the same environment (``CITEAUDIT_CELERY_*``) as the executor that submits the
steps, so both sides agree on the broker, the result backend and late acknowledgement. A
worker executes one step per task: it loads the job from the run's code pointer, opens the
instance of the run (``DAGSTER_HOME``, Postgres) and writes the step's events there.
"""

from __future__ import annotations

from dagster_celery.make_app import make_app
from dagster_celery.tasks import create_task

from pipelines.distributed import celery_app_args

app = make_app(celery_app_args())

execute_plan = create_task(app)
