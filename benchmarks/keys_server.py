"""The WSGI app ``bench keys`` serves with gunicorn: the app itself, whose review
endpoints carry the ``Server-Timing`` header of ``kgreview.core.server_timing`` (``total``
from the request reaching Django's first middleware to its response, ``db`` the time in
database calls and their number), so the browser can tell the server's share of a
keypress from its own. With ``KG_BENCH_PROFILE=DIR`` the first ``KG_BENCH_PROFILE_N``
(default 20) requests that replace the card (a decision or a skip) run under cProfile,
each written to ``DIR``.
"""

from __future__ import annotations

import cProfile
import os
import threading

from django.core.wsgi import get_wsgi_application

_profiled = 0
_lock = threading.Lock()


def _card_request(environ) -> bool:
    path = environ.get("PATH_INFO", "")
    if environ.get("HTTP_HX_REQUEST") != "true":
        return False
    if environ.get("REQUEST_METHOD") == "POST":
        return path.endswith(("/accept/", "/reject/"))
    return path.endswith("/review/focus/")


def _should_profile(environ) -> str | None:
    global _profiled
    folder = os.environ.get("KG_BENCH_PROFILE")
    if not folder or not _card_request(environ):
        return None
    with _lock:
        if _profiled >= int(os.environ.get("KG_BENCH_PROFILE_N", "20")):
            return None
        _profiled += 1
        return os.path.join(folder, f"{os.getpid()}-{_profiled}.prof")


def profiled(app):
    def wrapper(environ, start_response):
        target = _should_profile(environ)
        if target is None:
            return app(environ, start_response)
        profile = cProfile.Profile()
        try:
            return profile.runcall(app, environ, start_response)
        finally:
            profile.dump_stats(target)

    return wrapper


application = profiled(get_wsgi_application())
