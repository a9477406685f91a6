"""What one action changed in the graph, as far as open proposals are concerned.

A decision, an undo or a curator's mend fills a ``GraphChanges``; ``reconcile`` reads it
to settle the proposals that depended on what changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kgreview.graph.models import Edge


@dataclass
class GraphChanges:
    """What one action changed, as far as open proposals are concerned."""

    named: set[int] = field(default_factory=set)  # concepts that gained names
    resolved: dict[int, int] = field(default_factory=dict)  # add_concept proposal -> concept
    rejected: set[int] = field(default_factory=set)  # add_concept proposals rejected
    merged: dict[int, int] = field(default_factory=dict)  # loser -> survivor
    retired: set[int] = field(default_factory=set)  # concepts a curator retired
    unmade: dict[int, int] = field(default_factory=dict)  # concept -> reopened proposal
    edges_added: set[int] = field(default_factory=set)
    edges_gone: set[int] = field(default_factory=set)
    # Rows already in hand (an accepted edge), so settling need not read them again, and
    # the dedup keys of proposals just accepted: no other open proposal can hold those.
    edge_rows: dict[int, Edge] = field(default_factory=dict)
    closed_keys: set[str] = field(default_factory=set)
    # Edges whose proposal's lock said no open proposal states them as an inverse twin
    # (``services.open_twin``): settling asks no more about those.
    twinless: set[int] = field(default_factory=set)

    def edge_accepted(self, edge: Edge, proposal) -> None:
        """An accepted proposal made ``edge`` (its row in hand): settling reads neither the
        row again nor, when the proposal's lock said it has no inverse twin open
        (``services.open_twin``), the twins; and no open proposal can hold its key."""
        self.edges_added.add(edge.pk)
        self.edge_rows[edge.pk] = edge
        self.closed_keys.add(proposal.dedup_key)
        if getattr(proposal, "open_twin_id", -1) is None:  # its lock asked
            self.twinless.add(edge.pk)

    def __bool__(self) -> bool:
        return any(
            (
                self.named,
                self.resolved,
                self.rejected,
                self.merged,
                self.retired,
                self.unmade,
                self.edges_added,
                self.edges_gone,
            )
        )
