"""What became of decided proposals: acceptance per relation, agent and model,
calibration per confidence bin, and the confidence gate each relation type needs to meet
a target, from a few aggregate queries.

What "the model said" means here: an edit-and-accept may overwrite a proposal's
confidence and relation, so calibration and acceptance read them as the agent proposed
them, from the first edit decision's ``before`` when there is one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings
from django.db.models import (
    Case,
    CharField,
    Count,
    F,
    FloatField,
    Min,
    Q,
    Subquery,
    Sum,
    When,
)
from django.db.models.fields.json import KT
from django.db.models.functions import Cast, Coalesce, Floor

from kgreview.agents.models import AgentRun
from kgreview.review.models import Decision, Proposal

from .rates import BIN_COUNT, Calibration, CalibrationBin, GateNeed, Outcomes, Rate

DEFAULT_TARGET = 0.8
# Gates are searched in steps of 0.01 of confidence, the precision agents report it in
# and a curator would set KG_CONFIDENCE_GATE to; every two-decimal confidence observed is
# a candidate of its own. The result has at most 101 rows per relation type.
STEPS = 100
STEP_NUDGE = 1e-6
DECIDED = (Proposal.Status.ACCEPTED, Proposal.Status.REJECTED)
ALL = ""  # the key of the "every proposal, any kind" group
# Two ratios equal on paper may differ in the last bit; a target is met when it is met.
EPSILON = 1e-9


AGENT_LABELS = dict(AgentRun.Agent.choices)
NO_AGENT = "By hand (no agent run)"


def _agent_label(agent: str | None) -> str:
    if agent is None:
        return NO_AGENT
    return AGENT_LABELS.get(agent, agent)


def _model_label(provider: str | None, model: str | None) -> str:
    if provider is None and model is None:
        return NO_AGENT
    if provider and model:
        return f"{provider} · {model}"
    return provider or model or "unknown model"


def _step(confidence) -> Floor:
    """The confidence step (0 to STEPS) of a confidence expression.

    The nudge keeps 0.57, which is 56.999... once multiplied by 100, in step 57.
    """
    return Floor(confidence * STEPS + STEP_NUDGE)


def _by_step(*, gate: float) -> list[dict]:
    """Decided proposals per relation and confidence step, as stored now."""
    accepted = Q(status=Proposal.Status.ACCEPTED)
    passes = Q(confidence__gte=gate)
    return list(
        Proposal.objects.filter(status__in=DECIDED)
        .annotate(step=_step(F("confidence")))
        .values("relation_key", "step")
        .annotate(
            accepted=Count("pk", filter=accepted),
            rejected=Count("pk", filter=~accepted),
            confidence_sum=Sum("confidence"),
            at_gate=Count("pk", filter=passes),
            at_gate_accepted=Count("pk", filter=passes & accepted),
        )
        .order_by()
    )


def _by_origin() -> list[dict]:
    """Decided proposals per agent, provider and model (an edit changes none of these)."""
    accepted = Q(status=Proposal.Status.ACCEPTED)
    return list(
        Proposal.objects.filter(status__in=DECIDED)
        .values("origin__agent", "origin__provider", "origin__model")
        .annotate(
            accepted=Count("pk", filter=accepted),
            rejected=Count("pk", filter=~accepted),
        )
        .order_by()
    )


def _edits(*, gate: float) -> list[dict]:
    """Decided proposals that an edit changed, grouped by what they are now and what the
    agent proposed (read from the first edit decision's ``before``).

    Only edited proposals are read, so this stays small; the caller moves their counts
    from the step they sit in now to the step the agent claimed.
    """
    firsts = (
        Decision.objects.filter(action=Decision.Action.EDIT_ACCEPT)
        .values("proposal_id")
        .annotate(first=Min("id"))
        .values("first")
    )
    now = F("proposal__confidence")
    said = Coalesce(Cast(KT("before__confidence"), FloatField()), now, output_field=FloatField())
    return list(
        Decision.objects.filter(id__in=Subquery(firsts), proposal__status__in=DECIDED)
        .annotate(
            said=said,
            relation_now=F("proposal__relation_key"),
            relation_said=Coalesce(
                KT("before__payload__relation"),
                F("proposal__relation_key"),
                output_field=CharField(),
            ),
            step_now=_step(now),
            step_said=_step(said),
            passes_now=Case(When(proposal__confidence__gte=gate, then=1), default=0),
            passes_said=Case(When(said__gte=gate, then=1), default=0),
            accepted=Case(When(proposal__status=Proposal.Status.ACCEPTED, then=1), default=0),
        )
        .values(
            "relation_now",
            "relation_said",
            "step_now",
            "step_said",
            "passes_now",
            "passes_said",
            "accepted",
            "proposal__origin__agent",
            "proposal__origin__provider",
            "proposal__origin__model",
        )
        .annotate(n=Count("pk"), sum_now=Sum(now), sum_said=Sum("said"))
        .order_by()
    )


@dataclass
class _Cell:
    accepted: int = 0
    rejected: int = 0
    confidence_sum: float = 0.0
    at_gate: int = 0
    at_gate_accepted: int = 0

    @property
    def n(self) -> int:
        return self.accepted + self.rejected

    def add(self, *, n: int, accepted: bool | int, total: float, passes: int, sign: int = 1):
        """``n`` proposals, all accepted or all rejected, all passing the gate or none."""
        if accepted:
            self.accepted += sign * n
        else:
            self.rejected += sign * n
        self.confidence_sum += sign * total
        self.at_gate += sign * n * passes
        self.at_gate_accepted += sign * n * passes * bool(accepted)


def _cells(*, gate: float) -> tuple[dict[tuple[str, int], _Cell], list[dict]]:
    """Decided proposals per (relation, step) as the agent proposed them, and the edits."""
    cells: dict[tuple[str, int], _Cell] = defaultdict(_Cell)
    for row in _by_step(gate=gate):
        cell = cells[(row["relation_key"], int(row["step"]))]
        cell.accepted += row["accepted"]
        cell.rejected += row["rejected"]
        cell.confidence_sum += row["confidence_sum"]
        cell.at_gate += row["at_gate"]
        cell.at_gate_accepted += row["at_gate_accepted"]
    edits = _edits(gate=gate)
    for row in edits:
        n, accepted = row["n"], row["accepted"]
        cells[(row["relation_now"], int(row["step_now"]))].add(
            n=n, accepted=accepted, total=row["sum_now"], passes=row["passes_now"], sign=-1
        )
        cells[(row["relation_said"], int(row["step_said"]))].add(
            n=n, accepted=accepted, total=row["sum_said"], passes=row["passes_said"]
        )
    return {k: c for k, c in cells.items() if c.n}, edits


def _calibration(key: str, label: str, cells: list[tuple[int, _Cell]]) -> Calibration:
    bins = [[0, 0, 0.0] for _ in range(BIN_COUNT)]
    for step, cell in cells:
        b = bins[min(step * BIN_COUNT // STEPS, BIN_COUNT - 1)]
        b[0] += cell.n
        b[1] += cell.accepted
        b[2] += cell.confidence_sum
    return Calibration(
        key, label, tuple(CalibrationBin(i, n, a, s) for i, (n, a, s) in enumerate(bins))
    )


def _gate_need(
    key: str, label: str, cells: list[tuple[int, _Cell]], *, target: float, gate: float
) -> GateNeed:
    per_step: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for step, cell in cells:
        per_step[step][0] += cell.n
        per_step[step][1] += cell.accepted
    threshold, passing, passing_accepted = None, 0, 0
    n = accepted = 0
    # From the most confident down: the last step that still meets the target is the
    # lowest gate that does (the running share need not fall steadily).
    for step in sorted(per_step, reverse=True):
        n += per_step[step][0]
        accepted += per_step[step][1]
        if accepted / n >= target - EPSILON:
            threshold, passing, passing_accepted = step / STEPS, n, accepted
    return GateNeed(
        key=key,
        label=label,
        target=target,
        decided=sum(c.n for _, c in cells),
        threshold=threshold,
        passing=passing,
        passing_accepted=passing_accepted,
        gate=gate,
        at_gate=sum(c.at_gate for _, c in cells),
        at_gate_accepted=sum(c.at_gate_accepted for _, c in cells),
    )


def _rate(key: str, label: str, cells: Iterable[_Cell], edited: int) -> Rate:
    """The acceptance rate of a group: its cells' accepted and rejected summed."""
    accepted = rejected = 0
    for cell in cells:
        accepted += cell.accepted
        rejected += cell.rejected
    return Rate(key, label, accepted, rejected, edited)


def _sorted(rates) -> tuple[Rate, ...]:
    return tuple(sorted(rates, key=lambda r: (-r.n, r.label.casefold())))


def outcomes(*, target: float = DEFAULT_TARGET, gate: float | None = None) -> Outcomes:
    """Acceptance by relation type, agent and model; calibration, and the gate each
    relation type would need to keep ``target`` of what passes accepted. Three queries.

    Relation and confidence count as the agent proposed them: an edit may have changed
    both, so edited proposals are moved back to where the agent put them.
    """
    gate = settings.KG_CONFIDENCE_GATE if gate is None else gate
    cells, edits = _cells(gate=gate)
    edited_by: dict[object, int] = defaultdict(int)
    for row in edits:
        if row["accepted"]:
            origin = (
                row["proposal__origin__agent"],
                row["proposal__origin__provider"],
                row["proposal__origin__model"],
            )
            for key in (
                ("rel", row["relation_said"]),
                ("agent", origin[0]),
                ("model", origin[1:]),
                ("all", ALL),
            ):
                edited_by[key] += row["n"]
    by_relation_cells: dict[str, list[tuple[int, _Cell]]] = defaultdict(list)
    for (relation, step), cell in cells.items():
        by_relation_cells[relation].append((step, cell))
    everything = [(step, cell) for (_, step), cell in cells.items()]
    relations = tuple(sorted(k for k in by_relation_cells if k))

    agents: dict[object, list[_Cell]] = defaultdict(list)
    models: dict[object, list[_Cell]] = defaultdict(list)
    for row in _by_origin():
        cell = _Cell(accepted=row["accepted"], rejected=row["rejected"])
        agents[row["origin__agent"]].append(cell)
        models[(row["origin__provider"], row["origin__model"])].append(cell)
    return Outcomes(
        overall=_rate(ALL, "All proposals", (c for _, c in everything), edited_by[("all", ALL)]),
        by_relation=_sorted(
            _rate(k, k, (c for _, c in by_relation_cells[k]), edited_by[("rel", k)])
            for k in relations
        ),
        by_agent=_sorted(
            _rate(str(k), _agent_label(k), group, edited_by[("agent", k)])
            for k, group in agents.items()
        ),
        by_model=_sorted(
            _rate(f"{k[0]}|{k[1]}", _model_label(*k), group, edited_by[("model", k)])
            for k, group in models.items()
        ),
        calibration={
            ALL: _calibration(ALL, "All proposals", everything),
            **{k: _calibration(k, k, by_relation_cells[k]) for k in relations},
        },
        gates=(
            _gate_need(ALL, "All proposals", everything, target=target, gate=gate),
            *(_gate_need(k, k, by_relation_cells[k], target=target, gate=gate) for k in relations),
        ),
        target=target,
        gate=gate,
        relations=relations,
    )
