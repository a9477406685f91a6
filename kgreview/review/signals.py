"""Signals the review app sends, for higher apps to act on without review importing them.

``relation_type_accepted`` is sent once the decision that created a relation type has
committed (with ``key``): the agents app connects it to verify again the candidates
dropped for lacking that type.
"""

from __future__ import annotations

from django.dispatch import Signal

relation_type_accepted = Signal()
