"""Agent runs, Celery tasks and schedules."""
