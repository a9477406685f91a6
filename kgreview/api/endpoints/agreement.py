"""How far reviewers agree on the proposals double review decided twice: /v1/agreement."""

from __future__ import annotations

from datetime import datetime

from kgreview.review.agreement import cached_ratings, seen_by

from .. import schemas as s
from ..app import answers, api, served
from ..params import instant
from ..throttle import EVERY, HEAVY


@api.get(
    "/v1/agreement",
    response=answers(s.AgreementOut),
    tags=["review"],
    throttle=[EVERY, HEAVY],
)
@served
def agreement(request, since: datetime | None = None):
    """Agreement between reviewers, from double review's votes (since ``since``, all
    time without it): Krippendorff's alpha with a 95% bootstrap interval, Fleiss' kappa
    and observed agreement overall, per relation type (``relations``) and per kind of
    the other proposals (``kinds``); Cohen's kappa per pair of reviewers; each
    reviewer's agreement, agreement with adjudication, speed and share of acceptances
    others reversed. Curators read every reviewer's figures; anyone else their own row
    and pairs. Kept a minute: a vote just cast may take that long to count."""
    return seen_by(cached_ratings(since=instant(since, "since")), request.user)
