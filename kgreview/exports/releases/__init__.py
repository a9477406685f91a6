"""Releases: named, frozen versions of the graph (``docs/releases.md``).

``names`` holds the rules for a release's name and instant, ``notes`` builds its notes
from the diff, ``files`` writes and checks its stored exports, ``services`` cuts one (the
one audited write) and carries out a build request, ``tasks`` runs that in Celery.
"""
