"""A server process's long-lived objects, kept out of the cyclic garbage collector's way.

Python's collector looks for reference cycles among the objects that can hold others.
Its young generations are small and cheap; a full collection (the oldest generation)
walks every such object the process holds, and it runs whenever enough new objects have
survived since the last one. A server process holds a great many objects that never
die: Django, its models and templates, the loaded application. A request that
makes a few thousand rows (a bulk accept of 1,000 proposals makes about 12,000 model
instances) then pays for one or two full collections, each walking all of them: on the
developers' machine 170–350 ms of a bulk request's 1.2–1.5 s (``bench bulk --profile``,
the ``gc`` phase), and the same pause at random in a decision's tail.

:func:`settle` collects once and then freezes what is left (``gc.freeze``, Python's own
remedy for this): later collections never walk those objects again, and a full
collection costs what the objects made since cost (13–27 ms for the same bulk request).
Frozen objects are still freed when nothing refers to them; only a cycle among them
would stay, and what is frozen is the application itself, which lives as long as the
process. Called where a process has loaded what it keeps: ``kgreview.wsgi`` once the
application is loaded, and the benchmarks just before they measure (as a server process
would be by then). A large name index freezes itself as it is built
(``kgreview.graph.name_index``).
"""

from __future__ import annotations

import gc


def settle() -> int:
    """Collect what is garbage now, then freeze the rest out of later collections;
    returns how many objects are frozen."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
