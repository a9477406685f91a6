"""WSGI entry point (gunicorn kgreview.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application

from kgreview.core.heap import settle

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kgreview.settings")

application = get_wsgi_application()


def _warm() -> None:
    """KG_NAME_INDEX_WARM: the search's and the ask loop's names, built as the worker
    process loads the application (gunicorn's default; with --preload, on first use)."""
    from kgreview.graph.name_index import QUESTION_INDEX, warm_in_background
    from kgreview.graph.search import NAME_CACHE

    warm_in_background(NAME_CACHE, QUESTION_INDEX)


_warm()
# What the application loaded lives as long as the process: out of the collector's way
# (``kgreview.core.heap``).
settle()
