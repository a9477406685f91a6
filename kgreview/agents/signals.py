"""What the agents tell the apps above them (which connect in their ``AppConfig.ready``;
agents never imports them).

``reaper_pass`` is sent after each reaper pass (beat's ``agents.reap`` and every worker's
reaper thread, ``agents.tasks.reap_and_queue``), with ``now``: a higher app that keeps
work of its own in the workers sweeps it there (the exports' release builds whose worker
died or whose task was lost).
"""

from __future__ import annotations

from django.dispatch import Signal

reaper_pass = Signal()
