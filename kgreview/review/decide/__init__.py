"""Deciding a proposal: the decision services and what a decision sets off (settling the
queue, reconciling, undoing, bulk decisions, mending by hand)."""
