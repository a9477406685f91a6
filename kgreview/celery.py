"""The Celery application; configuration comes from Django settings (``CELERY_*``)."""

import os

from celery import Celery
from celery.signals import worker_process_init, worker_ready, worker_shutdown

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kgreview.settings")

app = Celery("kgreview")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_process_init.connect
def warm_name_index(**_kwargs) -> None:
    """KG_NAME_INDEX_WARM: a prefork worker builds the construction loop's name index as
    it starts, not while its first source waits."""
    from kgreview.agents.adapters import INDEX_CACHE
    from kgreview.graph.name_index import warm_in_background

    warm_in_background(INDEX_CACHE)


@worker_process_init.connect
def settle_heap(**_kwargs) -> None:
    """What a worker process loaded lives as long as it: out of the garbage collector's
    way (``kgreview.core.heap``)."""
    from kgreview.core.heap import settle

    settle()


_reaper = None


@worker_ready.connect
def start_reaper(**_kwargs) -> None:
    """Every worker also runs the reaper (``kgreview.agents.beat.ReaperThread``): lost
    sources are resumed even while beat is down."""
    global _reaper
    from django.conf import settings

    if not settings.KG_WORKER_REAPER:
        return
    from kgreview.agents.beat import ReaperThread

    _reaper = ReaperThread()
    _reaper.start()


@worker_shutdown.connect
def stop_reaper(**_kwargs) -> None:
    if _reaper is not None:
        _reaper.stop()
