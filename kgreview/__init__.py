"""kgreview: a human-in-the-loop review app for knowledge graphs."""

from .celery import app as celery_app

__all__ = ["celery_app"]
