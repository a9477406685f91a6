"""A scripted team session in Chromium: two reviewers and a curator at work at once.

    python -m evaluation.team.walk --base http://127.0.0.1:8011 --minutes 30 --json

against a running kgreview (``manage.py graph --demo``, say, started with
``KG_DOUBLE_REVIEW_SHARE=0.3``), with the same ``KG_VAR_DIR`` / ``DATABASE_URL`` in this
process so the script can check the database afterwards. The demo's accounts are used
(``reviewer``, ``curator``, password ``kgreview-demo``) and a second reviewer,
``reviewer2``, is made when missing.

Each round, each reviewer makes one decision by keyboard on their Review page (mostly
accepts, some rejections with a reason key, now and then a skip, an undo or a question
marked "needs discussion"); the curator, every few rounds, assigns the second reviewer a
relation (once), adjudicates a proposal the reviewers differ on, and answers and resolves
a question. At the end it checks, and prints:

- whether the two reviewers were ever shown the same open card at the same moment,
  outside double review, and which cards both were served over the session (a card one
  skipped may reach the other later: that is allowed);
- whether every proposal decided in the session was decided exactly once (one closing
  decision not undone; a doubled one with both votes naming it);
- every 5xx response and every console error (there must be none).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field

PASSWORD = "kgreview-demo"
#: The reviewers' Review page (``--queue``): the pending proposals, or all open ones.
FOCUS = ["/review/focus/"]


@dataclass
class Log:
    served: dict[str, set[int]] = field(
        default_factory=lambda: {"reviewer": set(), "reviewer2": set()}
    )
    together: list[tuple[int, int]] = field(default_factory=list)  # both shown at once
    actions: Counter = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    decided: set[int] = field(default_factory=set)


def _setup_django() -> None:
    sys.path.insert(0, os.getcwd())
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kgreview.settings")
    import django

    django.setup()


def _second_reviewer() -> None:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    user, made = get_user_model().objects.get_or_create(username="reviewer2")
    if made:
        user.set_password(PASSWORD)
        user.save()
        user.groups.add(Group.objects.get(name="reviewer"))


def _relation_to_assign(wanted: str) -> str:
    """The relation the curator assigns to reviewer2: the one asked for, else the one
    with the most open edge proposals (a team graph's vocabulary is not the demo's)."""
    from django.db.models import Count

    from kgreview.review.models import OPEN_STATUSES, Proposal

    if wanted:
        return wanted
    top = (
        Proposal.objects.filter(status__in=OPEN_STATUSES, relation__isnull=False)
        .values("relation__key")
        .annotate(n=Count("pk"))
        .order_by("-n")
        .first()
    )
    return top["relation__key"] if top else "builds_on"


#: Names, in the console, the request an htmx out-of-band error came with (htmx says only
#: which element it could not place).
WHICH_REQUEST = """
document.addEventListener("htmx:beforeSwap", function (e) {
  var c = e.detail.requestConfig;
  window.kgLastSwap = c ? c.verb + " " + c.path : "?";
});
document.addEventListener("htmx:oobErrorNoTarget", function () {
  console.error("(the out-of-band part above came with " + (window.kgLastSwap || "?") + ")");
});
"""


def _page(browser, base: str, name: str, log: Log, focus: str = "/review/focus/"):
    page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    page.add_init_script(WHICH_REQUEST)
    page.on(
        "console",
        lambda m: (
            log.errors.append(f"{name} console on {page.url}: {m.text}")
            if m.type == "error"
            else None
        ),
    )
    page.on(
        "response",
        lambda r: log.errors.append(f"{name} {r.status} {r.url}") if r.status >= 500 else None,
    )
    page.goto(f"{base}/login/")
    page.fill("#id_username", name)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/")
    page.goto(f"{base}{focus}")
    return page


def _card(page) -> int | None:
    value = page.locator("#card").get_attribute("data-proposal")
    return int(value) if value else None


def _moved(page, pk: int, name: str, log: Log, base: str) -> bool:
    """Wait for the card to leave ``pk``; a card that stands still 20 s is a fault: it is
    recorded with what the page showed (its status, its words, a screenshot) and the
    reviewer reloads their Review page, so one fault does not end the walk."""
    from playwright.sync_api import TimeoutError as Timeout
    from playwright.sync_api import expect

    moved = page.locator(f"#card:not([data-proposal='{pk}'])")
    try:
        expect(moved).to_be_visible(timeout=20000)
        return True
    except (AssertionError, Timeout):
        card = page.locator("#card")
        status = card.get_attribute("data-status") if card.count() else None
        words = " | ".join(page.locator("#card .flash").all_inner_texts()) if card.count() else ""
        shot = f"/tmp/walk-stall-{name}-{pk}.png"
        page.screenshot(path=shot)
        log.errors.append(
            f"{name} stalled on #{pk} (status {status}) saying {words!r}; screenshot {shot}"
        )
        page.goto(f"{base}{FOCUS[0]}")
        return False


def _reviewer_step(page, name: str, rng: random.Random, log: Log, base: str) -> None:
    from playwright.sync_api import expect

    pk = _card(page)
    if pk is None:
        log.actions[f"{name}:empty"] += 1
        page.goto(f"{base}{FOCUS[0]}")
        return
    log.served[name].add(pk)
    roll = rng.random()
    keys: list[str] = []
    if roll < 0.04 and page.locator("#discuss-button").count():
        page.keyboard.press("d")
        question, gone = page.locator("#question"), page.locator("#no-question")
        expect(question.or_(gone)).to_be_visible(timeout=20000)
        if gone.count():
            # A colleague decided this card since it was shown (an edge took this concept
            # with it): the panel says so; look at the queue again.
            log.actions[f"{name}:ask-on-a-decided-card"] += 1
            page.goto(f"{base}{FOCUS[0]}")
            return
        expect(question).to_be_focused()
        page.keyboard.type(f"Does the quote really say this? ({name})")
        page.keyboard.press("Control+Enter")
        action = "ask"
    elif roll < 0.09 and page.locator("#undo-button").count():
        page.keyboard.press("u")
        action = "undo"
    elif roll < 0.14:
        page.keyboard.press("s")
        action = "skip"
    elif roll < 0.36:
        keys = ["r", str(rng.randint(1, 5))]
        action = "reject"
        log.decided.add(pk)
    else:
        keys = ["a"]
        action = "accept"
        log.decided.add(pk)
    for key in keys:
        page.keyboard.press(key)
    log.actions[f"{name}:{action}"] += 1
    if action not in ("accept", "reject", "skip", "ask"):
        page.wait_for_load_state("networkidle")
        return
    moved = page.locator(f"#card:not([data-proposal='{pk}'])")
    changed = page.locator("#card .flash.bad", has_text="changed while you were looking")
    try:
        expect(moved.or_(changed)).to_be_visible(timeout=20000)
    except AssertionError:
        _moved(page, pk, name, log, base)  # records the stall
        return
    if changed.count() and not moved.count():
        # The graph changed under the card (a colleague accepted the concept it waited
        # for, or superseded it): the card shows it as it is now; look, and decide again,
        # or go on when it is no longer open.
        log.actions[f"{name}:looked-again"] += 1
        still_open = page.locator("#card").get_attribute("data-status") in ("pending", "held")
        if not still_open:
            log.actions[f"{name}:closed-meanwhile"] += 1
        for key in (keys if still_open else []) or ["s"]:
            page.keyboard.press(key)
        _moved(page, pk, name, log, base)


def _curator_step(page, base: str, rng: random.Random, log: Log, state: dict) -> None:
    from playwright.sync_api import expect

    if not state.get("assigned"):
        relation = state["relation"]
        page.goto(f"{base}/review/team/?q=relation%3D{relation}")
        page.get_by_label("Name").fill(f"{relation} this week")
        page.get_by_label("Assign to").select_option(label="reviewer2")
        page.get_by_label("Target (optional)").fill("5")
        page.get_by_role("button", name="Assign").click()
        expect(page.locator("#assignments")).to_contain_text(f"{relation} this week")
        state["assigned"] = True
        log.actions["curator:assign"] += 1
        return
    page.goto(f"{base}/review/focus/?stage=adjudicate")
    pk = _card(page)
    if pk is not None:
        keys = ["a"] if rng.random() < 0.6 else ["r", "1"]
        for key in keys:
            page.keyboard.press(key)
        moved = page.locator(f"#card:not([data-proposal='{pk}'])")
        changed = page.locator("#card .flash.bad", has_text="changed while you were looking")
        expect(moved.or_(changed)).to_be_visible(timeout=20000)
        if changed.count() and not moved.count():
            # A reviewer's decision changed the card meanwhile (the concept it waited for
            # was accepted): the adjudicator looks again and decides again.
            log.actions["curator:looked-again"] += 1
            for key in keys:
                page.keyboard.press(key)
            _moved(page, pk, "curator", log, base)
        log.actions["curator:adjudicate"] += 1
        log.decided.add(pk)
    page.goto(f"{base}/review/?discussion=1&status=open")
    link = page.locator("#queue-results a[href*='id=']").first
    if link.count():
        match = re.search(r"[?&]id=(\d+)", link.get_attribute("href") or "")
        if match:
            page.goto(f"{base}/review/focus/?id={match.group(1)}")
            page.keyboard.press("c")
            expect(page.locator("#thread-panel")).to_be_visible()
            body = page.locator("#comment-body")
            body.fill("It does: read the second sentence.")
            body.press("Control+Enter")
            expect(page.locator("#thread-panel")).to_contain_text("read the second sentence")
            note = page.locator("#resolve-note")
            note.fill("Answered.")
            note.press("Control+Enter")
            expect(page.locator("#card .card-messages")).to_contain_text("back in the queue")
            log.actions["curator:answer"] += 1


def _checks(log: Log, started) -> dict:
    from django.db.models import Count, Q

    from kgreview.review.models import Decision, Proposal, Vote

    closing = ("accept", "reject", "edit_accept")
    twice = []
    for p in Proposal.objects.filter(pk__in=log.decided, status__in=("accepted", "rejected")):
        n = p.decisions.filter(action__in=closing, undone_by__isnull=True).count()
        if n != 1:
            twice.append(p.pk)
    doubled = set(
        Vote.objects.filter(created_at__gte=started)
        .values("proposal_id")
        .annotate(n=Count("user", distinct=True))
        .filter(n__gte=2)
        .values_list("proposal_id", flat=True)
    )
    together = [pair for pair in log.together if pair[0] == pair[1] and pair[0] not in doubled]
    both = log.served["reviewer"] & log.served["reviewer2"]
    return {
        "decided_in_session": len(log.decided),
        "decided_not_exactly_once": twice,
        "shown_to_both_at_once_outside_double_review": together,
        "served_to_both_over_the_session": len(both),
        "of_them_doubled": len(both & doubled),
        "doubled_proposals": len(doubled),
        "adjudicated": Decision.objects.filter(
            created_at__gte=started, note__startswith="Adjudicated"
        ).count(),
        "open_adjudication": Proposal.objects.filter(
            stage="adjudicate", status__in=("pending", "held")
        ).count(),
        "questions": Proposal.objects.filter(Q(discussions__asked_at__gte=started))
        .distinct()
        .count(),
        "actions": dict(sorted(log.actions.items())),
        "errors": log.errors,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", default="http://127.0.0.1:8011")
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--rounds", type=int, default=0, help="stop after this many rounds")
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--queue",
        default="status=open",
        help="the reviewers' queue filter (default: every open proposal, held ones after "
        "the pending; 'status=pending' for the pending alone)",
    )
    parser.add_argument(
        "--relation", default="", help="the relation assigned (default: the most proposed)"
    )
    parser.add_argument(
        "--pause",
        type=float,
        default=0.0,
        help="seconds each round spends reading before the keys (so a queue lasts the run)",
    )
    args = parser.parse_args(argv)
    _setup_django()
    _second_reviewer()
    from django.utils import timezone
    from playwright.sync_api import sync_playwright

    FOCUS[0] = f"/review/focus/?{args.queue}" if args.queue else "/review/focus/"
    rng = random.Random(args.seed)
    log = Log()
    started = timezone.now()
    state: dict = {"relation": _relation_to_assign(args.relation)}
    deadline = time.monotonic() + args.minutes * 60
    rounds = 0
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        rv = _page(browser, args.base, "reviewer", log, FOCUS[0])
        rv2 = _page(browser, args.base, "reviewer2", log, FOCUS[0])
        cu = _page(browser, args.base, "curator", log)
        while time.monotonic() < deadline and (not args.rounds or rounds < args.rounds):
            rounds += 1
            a, b = _card(rv), _card(rv2)
            if a is not None and b is not None:
                log.together.append((a, b))
            if args.pause:
                rv.wait_for_timeout(args.pause * 1000)  # reading the evidence
            for name, page in (("reviewer", rv), ("reviewer2", rv2)):
                _reviewer_step(page, name, rng, log, args.base)
            if rounds % 4 == 0:
                _curator_step(cu, args.base, rng, log, state)
        browser.close()
    report = {"rounds": rounds, "minutes": round(args.minutes, 1), **_checks(log, started)}
    print(json.dumps(report, indent=None if args.json else 2, default=str))
    ok = not (
        report["decided_not_exactly_once"]
        or report["shown_to_both_at_once_outside_double_review"]
        or report["errors"]
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
