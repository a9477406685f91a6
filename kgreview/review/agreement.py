"""How far reviewers agree, read from double review's votes, and each reviewer's figures.

A *unit* is one round of double review of one proposal: the non-withdrawn votes that one
decision settled (both alike: the decision that applied it; different: the curator's
adjudication), or the votes still open. A reviewer's later vote in the same round counts,
an earlier one does not; a round with fewer than two votes is not pairable and is left
out. Labels are compared as categories (``accept``, ``reject:<reason>``,
``edit:<digest>``): two edits that differ disagree.

The statistics are ``kgreview.core.agreement``'s. For the whole and per relation type
(``Vote.relation_key``, which only the edge kinds fill; the other kinds' votes group by
kind): Krippendorff's alpha with a bootstrap interval, Fleiss' kappa (raters change from
proposal to proposal, so chance agreement comes from the pooled labels) and observed
agreement. Per pair of reviewers and per reviewer against whoever else voted: Cohen's
kappa. Per reviewer also: agreement with the adjudicator, decisions per active hour,
median seconds per card, and the share of their acceptances someone else later reversed.

Bounded reads whatever the volume: the votes once, the people's card decisions once, the
edges others invalidated once, the usernames once, and the adjudicators' edits when an
edit was adjudicated. ``cached_ratings`` and ``low_agreement_relations`` keep their
answer for a minute in the default cache, so a page or every decision may ask.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from itertools import combinations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db.models import F

from kgreview.core import agreement as stats
from kgreview.core.permissions import is_curator
from kgreview.graph.models import Edge
from kgreview.review.models import Decision, EdgeProvenance, Vote

#: A gap between two of a person's cards longer than this is a pause, not work.
IDLE_SECONDS = 600
#: A relation needs this many units before its alpha can call it hard to agree on.
MIN_ITEMS = 10
CACHE_SECONDS = 60
CARD_ACTIONS = (Decision.Action.ACCEPT, Decision.Action.REJECT, Decision.Action.EDIT_ACCEPT)
ACCEPTS = (Decision.Action.ACCEPT, Decision.Action.EDIT_ACCEPT)
NOTES = (
    "A unit is one proposal's round of double review with at least two votes; withdrawn "
    "votes are left out.",
    "Intervals are 95% percentile bootstrap intervals of alpha over units (1,000 "
    "resamples, a fixed seed, so the same votes give the same interval).",
    "Reversed: a person's acceptances later undone by someone else, or whose edge "
    "someone else invalidated. A rejection whose fact was later accepted through a new "
    "proposal is not counted: nothing links the two proposals.",
    "Speed: gaps over 10 minutes between a person's cards are pauses and are left out; "
    "a bulk decision is one card.",
)


@dataclass
class Cast:
    """One vote as agreement reads it."""

    user_id: int
    label: str
    action: str


@dataclass
class Unit:
    """One round of double review of one proposal."""

    proposal_id: int
    decision_id: int | None
    relation_key: str
    kind: str
    decision_action: str | None = None
    decision_reason: str = ""
    votes: dict[int, Cast] = field(default_factory=dict)  # by user, the later vote wins

    @property
    def labels(self) -> list[str]:
        return [v.label for v in self.votes.values()]

    @property
    def adjudicated(self) -> bool:
        """Settled by a curator's decision after the votes differed."""
        return len(set(self.labels)) > 1 and self.decision_action in CARD_ACTIONS


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


# --- Reading --------------------------------------------------------------------------


#: What every unit needs of a vote; ``DETAILS`` adds what the people's figures need.
UNIT_FIELDS = ("proposal_id", "decision_id", "user_id", "label", "relation_key", "kind")
DETAILS = ("action", "created_at", "batch", "decision__action", "decision__reason_code")


def _votes(since: datetime | None, *, details: bool = True):
    """The non-withdrawn votes (cast since ``since``) as named rows, oldest first;
    without ``details`` only the relations' votes and only ``UNIT_FIELDS``."""
    qs = Vote.objects.filter(withdrawn_at__isnull=True)
    if since is not None:
        qs = qs.filter(created_at__gte=since)
    if not details:
        qs = qs.exclude(relation_key="")
    fields = UNIT_FIELDS + DETAILS if details else UNIT_FIELDS
    return qs.order_by("created_at", "id").values_list(*fields, named=True)


def group_units(rows) -> list[Unit]:
    """Votes (``_votes``'s rows) as units, pairable or not, in the order their first
    vote was cast; a reviewer's later vote in a unit replaces their earlier one."""
    units: dict[tuple[int, int | None], Unit] = {}
    for row in rows:
        unit = units.get((row.proposal_id, row.decision_id))
        if unit is None:
            unit = units[row.proposal_id, row.decision_id] = Unit(
                row.proposal_id, row.decision_id, row.relation_key, row.kind
            )
        detailed = hasattr(row, "action")
        if detailed:
            unit.decision_action = row.decision__action
            unit.decision_reason = row.decision__reason_code or ""
        unit.votes[row.user_id] = Cast(row.user_id, row.label, row.action if detailed else "")
    return list(units.values())


def pairable(units: list[Unit]) -> list[Unit]:
    return [u for u in units if len(u.votes) >= 2]


# --- The group figures ----------------------------------------------------------------


def is_low(alpha: float | None, items: int, *, threshold: float, min_items: int) -> bool:
    """The one rule for "people cannot agree on this": alpha measured on enough units and
    under the threshold. An undefined alpha (one answer only) is not low."""
    return alpha is not None and items >= min_items and alpha < threshold


def summary(units: list[Unit], *, resamples: int, seed: int) -> dict:
    found = stats.summarise([u.labels for u in units], resamples=resamples, seed=seed)
    interval = found.interval
    return {
        "items": found.alpha.items,
        "kappa": _r(found.fleiss.value),
        "alpha": _r(found.alpha.value),
        "observed": _r(found.observed.value),
        "interval": {**interval.as_json(), "low": _r(interval.low), "high": _r(interval.high)},
        "note": found.alpha.note or found.fleiss.note,
    }


def _grouped(units: list[Unit], *, threshold: float, min_items: int, **boot) -> tuple[dict, dict]:
    by_relation: dict[str, list[Unit]] = defaultdict(list)
    by_kind: dict[str, list[Unit]] = defaultdict(list)
    for u in units:
        (by_relation[u.relation_key] if u.relation_key else by_kind[u.kind]).append(u)
    relations = {}
    for key in sorted(by_relation):
        row = summary(by_relation[key], **boot)
        row["below_threshold"] = is_low(
            row["alpha"], row["items"], threshold=threshold, min_items=min_items
        )
        relations[key] = row
    kinds = {key: summary(by_kind[key], **boot) for key in sorted(by_kind)}
    return relations, kinds


def _pairs(units: list[Unit], names: dict[int, str]) -> list[dict]:
    by_pair: dict[tuple[int, int], list[tuple[str, str]]] = defaultdict(list)
    for u in units:
        for a, b in combinations(sorted(u.votes, key=lambda i: names.get(i, "")), 2):
            by_pair[a, b].append((u.votes[a].label, u.votes[b].label))
    out = []
    for (a, b), pairs in by_pair.items():
        kappa = stats.cohen_kappa(pairs)
        out.append(
            {
                "reviewers": [names.get(a, f"#{a}"), names.get(b, f"#{b}")],
                "items": len(pairs),
                "observed": _r(sum(x == y for x, y in pairs) / len(pairs)),
                "kappa": _r(kappa.value),
                "note": kappa.note,
            }
        )
    return sorted(out, key=lambda p: (-p["items"], p["reviewers"]))


# --- Each reviewer --------------------------------------------------------------------


@dataclass
class Person:
    pairs: list[tuple[str, str]] = field(default_factory=list)  # (mine, the other's)
    items: int = 0
    adjudicated: int = 0
    matched: int = 0
    decisions: int = 0
    cards: list[tuple[datetime, object]] = field(default_factory=list)  # (when, batch)
    accepted: int = 0
    reversed: int = 0


def _edit_matches(edit: tuple[dict, float | None], after: dict) -> bool:
    """An edit vote (its payload and confidence) agrees with an adjudicator's edit when
    it accepts the same payload, with the same confidence unless the vote left the
    confidence alone."""
    payload, confidence = edit
    if payload != after.get("payload"):
        return False
    wanted = after.get("confidence")
    return confidence is None or (
        wanted is not None and math.isclose(confidence, wanted, abs_tol=1e-9)
    )


def _adjudicated_edits(units: list[Unit]) -> dict[tuple[int, int], bool]:
    """For each edit vote on a proposal a curator settled with an edit: whether it made
    the curator's edit, keyed by (decision, user). One query, only when there are any."""
    ids = [
        u.decision_id
        for u in units
        if u.adjudicated and u.decision_action == Decision.Action.EDIT_ACCEPT
    ]
    if not ids:
        return {}
    rows = Vote.objects.filter(
        decision_id__in=ids, withdrawn_at__isnull=True, action=Vote.Action.EDIT_ACCEPT
    ).values_list("decision_id", "user_id", "payload", "confidence", "decision__after")
    return {(d, u): _edit_matches((p or {}, c), after or {}) for d, u, p, c, after in rows}


def _matches(cast: Cast, unit: Unit, edits: dict[tuple[int, int], bool]) -> bool:
    if unit.decision_action == Decision.Action.ACCEPT:
        return cast.action == Decision.Action.ACCEPT
    if unit.decision_action == Decision.Action.REJECT:
        return cast.label == f"reject:{unit.decision_reason}"
    return cast.action == Decision.Action.EDIT_ACCEPT and edits.get(
        (unit.decision_id or 0, cast.user_id), False
    )


def _agreement_of_each(units: list[Unit], people: dict[int, Person]) -> None:
    edits = _adjudicated_edits(units)
    for u in units:
        for user_id, cast in u.votes.items():
            person = people[user_id]
            person.items += 1
            person.pairs += [(cast.label, o.label) for i, o in u.votes.items() if i != user_id]
            if u.adjudicated:
                person.adjudicated += 1
                person.matched += _matches(cast, u, edits)


def _work_of_each(vote_rows, since: datetime | None, people: dict[int, Person]) -> None:
    """Cards (votes and people's own decisions), and acceptances others reversed."""
    settled_own: set[tuple[int, int]] = set()
    for row in vote_rows:
        people[row.user_id].decisions += 1
        people[row.user_id].cards.append((row.created_at, ("vote", row.batch)))
        if row.decision_id is not None:
            settled_own.add((row.decision_id, row.user_id))
    decisions = Decision.objects.filter(user__isnull=False, action__in=CARD_ACTIONS)
    if since is not None:
        decisions = decisions.filter(created_at__gte=since)
    read = decisions.values_list(
        "pk", "user_id", "action", "created_at", "batch", "caused_by_id", "undone_by__user_id"
    )
    for pk, user_id, action, created_at, batch, caused_by, undoer in read.iterator(5000):
        person = people[user_id]
        # The decision that applies two agreeing votes is the second voter's card once.
        if caused_by is None and (pk, user_id) not in settled_own:
            person.decisions += 1
            person.cards.append((created_at, ("decision", batch)))
        if action in ACCEPTS:
            person.accepted += 1
            person.reversed += undoer is not None and undoer != user_id
    invalidated = (
        EdgeProvenance.objects.filter(
            decision__user__isnull=False,
            decision__action__in=ACCEPTS,
            decision__undone_by__isnull=True,  # counted above when someone else undid it
            edge__status=Edge.Status.INVALIDATED,
            invalidation_decision__user__isnull=False,
        )
        .exclude(invalidation_decision__user=F("decision__user"))
        .values_list("decision_id", "decision__user_id")
        .distinct()
    )
    if since is not None:
        invalidated = invalidated.filter(decision__created_at__gte=since)
    for _decision_id, user_id in invalidated:
        people[user_id].reversed += 1


def speed(cards: list[tuple[datetime, object]]) -> tuple[float | None, float]:
    """The median seconds between a person's consecutive cards (pauses over
    ``IDLE_SECONDS`` left out; a batch is one card, at its first instant) and the active
    seconds in all."""
    first: dict[object, datetime] = {}
    for when, batch in cards:
        if batch not in first or when < first[batch]:
            first[batch] = when
    times = sorted(first.values())
    gaps = [(b - a).total_seconds() for a, b in zip(times, times[1:], strict=False)]
    active = [g for g in gaps if g <= IDLE_SECONDS]
    return (statistics.median(active) if active else None), float(sum(active))


def _person_row(name: str, person: Person) -> dict:
    kappa = stats.cohen_kappa(person.pairs)
    median, active = speed(person.cards)
    hours = active / 3600
    return {
        "username": name,
        "items": person.items,
        "observed": _r(sum(a == b for a, b in person.pairs) / len(person.pairs))
        if person.pairs
        else None,
        "kappa": _r(kappa.value),
        "kappa_note": kappa.note if person.pairs else "",
        "with_adjudication": _r(person.matched / person.adjudicated)
        if person.adjudicated
        else None,
        "adjudicated": person.adjudicated,
        "decisions": person.decisions,
        "per_hour": _r(person.decisions / hours) if hours > 0 else None,
        "median_seconds": _r(median),
        "active_hours": _r(hours),
        "accepted": person.accepted,
        "reversed": person.reversed,
        "reversed_share": _r(person.reversed / person.accepted) if person.accepted else None,
    }


# --- The whole report -----------------------------------------------------------------


def ratings(
    *,
    since: datetime | None = None,
    resamples: int = stats.RESAMPLES,
    seed: int = stats.SEED,
    threshold: float | None = None,
    min_items: int = MIN_ITEMS,
) -> dict:
    """Agreement overall, per relation type, per kind, per pair and per reviewer, from
    the votes (and decisions) since ``since`` (all time without it), as the command's
    and the API's JSON. ``threshold``: the alpha under which a relation is flagged,
    ``KG_DOUBLE_REVIEW_BELOW`` by default."""
    threshold = settings.KG_DOUBLE_REVIEW_BELOW if threshold is None else threshold
    rows = list(_votes(since))
    units = pairable(group_units(rows))
    boot = {"resamples": resamples, "seed": seed}
    people: dict[int, Person] = defaultdict(Person)
    _agreement_of_each(units, people)
    _work_of_each(rows, since, people)
    names = dict(get_user_model().objects.filter(pk__in=list(people)).values_list("pk", "username"))
    relations, kinds = _grouped(units, threshold=threshold, min_items=min_items, **boot)
    overall = summary(units, **boot)
    overall.update(
        votes=len(rows),
        since=since.isoformat() if since is not None else None,
        threshold=threshold,
        min_items=min_items,
        notes=list(NOTES),
    )
    reviewers = [
        _person_row(names.get(pk, f"#{pk}"), person)
        for pk, person in sorted(people.items(), key=lambda p: names.get(p[0], ""))
    ]
    return {
        "overall": overall,
        "relations": relations,
        "kinds": kinds,
        "reviewers": reviewers,
        "pairs": _pairs(units, names),
    }


def cached_ratings(*, since: datetime | None = None) -> dict:
    """``ratings`` kept a minute: a page view or an API call reads the cache."""
    key = f"kg-agreement:ratings:{since.isoformat() if since else 'all'}"
    report = cache.get(key)
    if report is None:
        report = ratings(since=since)
        cache.set(key, report, CACHE_SECONDS)
    return report


def seen_by(report: dict, user) -> dict:
    """What ``user`` may read of a report: curators everyone's figures, anyone else
    their own row (and the pairs they are in); the group figures for all."""
    if is_curator(user):
        return report
    mine = user.get_username()
    return {
        **report,
        "reviewers": [r for r in report["reviewers"] if r["username"] == mine],
        "pairs": [p for p in report["pairs"] if mine in p["reviewers"]],
    }


def low_agreement_relations(threshold: float, min_items: int = MIN_ITEMS) -> set[str]:
    """The relation types whose alpha (all time) is under ``threshold`` over at least
    ``min_items`` units: double review sends all their proposals to two reviewers. Reads
    the relations' votes once a minute at most (a cache), so every decision may ask."""
    key = f"kg-agreement:low:{threshold!r}:{min_items}"
    found = cache.get(key)
    if found is None:
        by_relation: dict[str, list[list[str]]] = defaultdict(list)
        for u in pairable(group_units(_votes(None, details=False))):
            by_relation[u.relation_key].append(u.labels)
        found = set()
        for relation, labels in by_relation.items():
            alpha = stats.krippendorff_alpha(labels)
            if is_low(alpha.value, alpha.items, threshold=threshold, min_items=min_items):
                found.add(relation)
        cache.set(key, found, CACHE_SECONDS)
    return set(found)


def relation_low(relation_key: str, threshold: float, *, min_items: int = MIN_ITEMS) -> bool:
    """Whether one relation's reviewers agree too little (``is_low`` over its units, all
    time): asked when one of its doubled proposals was settled or disputed, so that
    double review sends all of its proposals to two reviewers from then on."""
    rows = _votes(None, details=False).filter(relation_key=relation_key)
    alpha = stats.krippendorff_alpha([u.labels for u in pairable(group_units(rows))])
    return is_low(alpha.value, alpha.items, threshold=threshold, min_items=min_items)
