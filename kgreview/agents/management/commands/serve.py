"""manage.py serve — the web app, a Celery worker and beat as one process group.

The embedded way to run kgreview on one machine: stop it with Ctrl-C and every child
stops too. In a scaled deployment run gunicorn, ``celery worker`` and one
``celery beat`` as separate services instead (see the README).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Serve the reviewer UI with gunicorn, plus a Celery worker running beat."

    def add_arguments(self, parser):
        parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
        parser.add_argument("--web-workers", type=int, default=2)
        parser.add_argument("--concurrency", type=int, default=2, help="Celery worker processes")
        parser.add_argument("--no-worker", action="store_true", help="serve the web app only")

    def handle(self, *args, host, port, web_workers, concurrency, no_worker, **opts):
        python = sys.executable
        commands = {
            "web": [
                python,
                "-m",
                "gunicorn",
                "kgreview.wsgi",
                "--bind",
                f"{host}:{port}",
                "--workers",
                str(web_workers),
                "--threads",
                "4",
                "--access-logfile",
                "-",
                "--graceful-timeout",
                "10",
            ],
        }
        if not no_worker:
            commands["worker"] = [
                python,
                "-m",
                "celery",
                "-A",
                "kgreview",
                "worker",
                "--beat",
                "--scheduler",
                settings.CELERY_BEAT_SCHEDULER,
                "--concurrency",
                str(concurrency),
                "--loglevel",
                "INFO",
                "--hostname",
                "embedded@%h",
            ]
        procs: dict[str, subprocess.Popen] = {}
        stopping = False

        def stop(*_):
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        for name, cmd in commands.items():
            procs[name] = subprocess.Popen(cmd, start_new_session=True)
        self.stdout.write(
            self.style.SUCCESS(f"kgreview is serving on http://{host}:{port}/ ")
            + f"(broker: {settings.CELERY_BROKER_URL.split('://')[0]}, "
            f"database: {settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[-1]}). "
            "Ctrl-C stops everything."
        )
        code = 0
        while not stopping:
            for name, proc in procs.items():
                if proc.poll() is not None:
                    self.stderr.write(f"{name} exited with status {proc.returncode}; stopping.")
                    code = proc.returncode or 1
                    stopping = True
                    break
            time.sleep(0.5)
        for proc in procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 20
        for proc in procs.values():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        sys.exit(code)
