"""manage.py serve — the web app, a Celery worker and beat as one process group.

The embedded way to run kgreview on one machine: stop it with Ctrl-C (or SIGTERM) and
every child stops too. A worker that exits is restarted, with a growing pause, while the
web server keeps serving; the reaper (beat) resumes the runs it left. In a scaled
deployment run gunicorn, ``celery worker`` and one ``celery beat`` as separate services
instead (see the README).
"""

from __future__ import annotations

import contextlib
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
        self._supervise(commands, host=host, port=port)

    def _say(self, words: str, *, error: bool = False) -> None:
        """One line on the console at once (the log may be a file, which buffers)."""
        stream = self.stderr if error else self.stdout
        stream.write(f"serve: {words}")
        stream.flush()

    def _start(self, name: str, cmd: list[str]) -> subprocess.Popen:
        proc = subprocess.Popen(cmd, start_new_session=True)
        self._say(f"{name} started (pid {proc.pid}).")
        return proc

    def _supervise(self, commands: dict[str, list[str]], *, host: str, port: int) -> None:
        """Keep the children up until Ctrl-C or SIGTERM.

        The worker (with beat) is restarted whenever it exits, after a pause that doubles
        with each quick exit (``RESTART_PAUSES``), while the web server keeps serving: a
        fault in the worker is never an outage of the pages. The runs its death cut short
        are resumed by the reaper. Only the web server exiting stops everything.
        """
        procs: dict[str, subprocess.Popen] = {}
        stopping = False

        def stop(*_):
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        for name, cmd in commands.items():
            procs[name] = self._start(name, cmd)
        self._say(
            self.style.SUCCESS(f"kgreview is serving on http://{host}:{port}/ ")
            + f"(broker: {settings.CELERY_BROKER_URL.split('://')[0]}, "
            f"database: {settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[-1]}). "
            "Ctrl-C stops everything."
        )
        code = 0
        restarts = 0
        started = time.monotonic()
        restart_at: float | None = None
        while not stopping:
            web = procs["web"]
            if web.poll() is not None:
                self._say(f"web exited with status {web.returncode}; stopping.", error=True)
                code = web.returncode or 1
                break
            worker = procs.get("worker")
            if worker is not None and restart_at is None and worker.poll() is not None:
                # A worker that ran for a while starts over from the shortest pause.
                if time.monotonic() - started > RESTART_PAUSES[-1]:
                    restarts = 0
                _kill_leftovers(worker)
                pause = RESTART_PAUSES[min(restarts, len(RESTART_PAUSES) - 1)]
                restarts += 1
                restart_at = time.monotonic() + pause
                self._say(
                    f"the worker {_exit_words(worker.returncode)}; the web server keeps "
                    f"serving. Restarting the worker in {pause:g} s (restart {restarts}).",
                    error=True,
                )
            if restart_at is not None and time.monotonic() >= restart_at:
                procs["worker"] = self._start("worker", commands["worker"])
                started = time.monotonic()
                restart_at = None
            time.sleep(0.5)
        self._stop_all(procs)
        sys.exit(code)

    def _stop_all(self, procs: dict[str, subprocess.Popen]) -> None:
        for proc in procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 20
        for proc in procs.values():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)


#: Seconds to wait before restarting a worker that exited, doubling with each quick exit.
RESTART_PAUSES = (1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 60.0)


def _kill_leftovers(proc: subprocess.Popen) -> None:
    """Pool processes of a worker whose main process died must not go on holding claims."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _exit_words(code: int) -> str:
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"was killed ({name})"
    return f"exited with status {code}"
