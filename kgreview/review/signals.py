"""Signals the review app sends, for higher apps to act on without review importing them.

``relation_type_accepted`` is sent once the decision that created a relation type has
committed (with ``key``): the agents app connects it to verify again the candidates
dropped for lacking that type.

``ontology_accepted`` is sent once a decision that changed the ontology's shape has
committed: a pattern allowed (``relation_keys``: the relations it widened) or a concept
type added (``relation_keys`` None: any relation may be concerned; ``type_key``: the
type). The agents app connects it to verify again the candidates held or dropped for
breaking a pattern, and to propose a new type for the untyped concepts it fits.
"""

from __future__ import annotations

from django.dispatch import Signal

relation_type_accepted = Signal()
ontology_accepted = Signal()
