"""Racing real transactions: calls started at the same moment in separate threads."""

from __future__ import annotations

import threading

from django.db import connections


def race(*calls, timeout: float = 120) -> list[object]:
    """Run the calls at the same moment in separate threads (each its own connection and
    transaction); return each one's result or the exception it raised."""
    barrier = threading.Barrier(len(calls))
    results: list[object] = [None] * len(calls)

    def run(i, fn):
        try:
            barrier.wait()
            results[i] = fn()
        except BaseException as exc:  # collected for the assertions
            results[i] = exc
        finally:
            connections.close_all()  # this thread's connection, or teardown waits on it

    threads = [threading.Thread(target=run, args=(i, fn)) for i, fn in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    return results
