"""Input that used to reach the database raw (issue 13): control characters are refused at
the edge with a 400 in words, numbers are bounded and finite, and nothing is written.

Run on PostgreSQL as well (NUL bytes only broke there):
``DATABASE_URL=postgres://... pytest tests/core/test_hostile_input.py``.
"""

from __future__ import annotations

import html as htmllib
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.http import QueryDict
from django.test import Client, RequestFactory
from django.urls import reverse
from django.utils.datastructures import MultiValueDict

from kgreview.api.models import ApiToken
from kgreview.core.forms import BIGGEST_INT, TextField, parse_finite, parse_int, parse_row_id
from kgreview.core.middleware import control_problem
from kgreview.review.models import Decision, Proposal

pytestmark = pytest.mark.django_db

HUGE = "99999999999999999999"


@pytest.fixture
def curator(f) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(f.user("curator-user", role="curator"))
    return client


@pytest.fixture
def pending(f):
    """An add_edge proposal waiting for review."""
    return f.edge_proposal(f.concept("Embeddings"), f.concept("Vector search"))


def words_of(response) -> str:
    return htmllib.unescape(response.content.decode())


# --- the URLs the issue lists ----------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "where"),
    [
        ("/concepts/?q=%00", "query parameter “q”"),
        ("/review/?relation=%00", "query parameter “relation”"),
        ("/review/?source=%00", "query parameter “source”"),
        ("/review/decisions/?reviewer=%00", "query parameter “reviewer”"),
        ("/review/focus/?source=x%00y", "query parameter “source”"),
    ],
)
def test_a_nul_in_a_page_query_is_a_400_page_in_words(curator, url, where):
    response = curator.get(url)
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")
    words = words_of(response)
    assert f"The {where} holds a NUL byte, which kgreview does not accept." in words
    assert "<h1>Not accepted</h1>" in words


def test_a_nul_in_an_api_parameter_is_a_400_in_the_apis_json(curator):
    response = curator.get("/api/v1/concepts/1/neighbours?relation=%00")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    detail = response.json()["detail"]
    assert detail.startswith("The query parameter “relation” holds a NUL byte")


def test_an_htmx_request_gets_a_toast_and_no_swap(curator):
    response = curator.get("/review/?relation=%00", headers={"HX-Request": "true"})
    assert response.status_code == 400
    assert response["HX-Reswap"] == "none"
    message = json.loads(response["HX-Trigger"])["kgRefused"]["message"]
    assert message.startswith("The query parameter “relation” holds a NUL byte")
    assert words_of(response) == f'<p class="refusal" role="alert">{message}</p>'


def test_a_reject_note_with_a_nul_decides_nothing(curator, pending):
    url = reverse("review:reject", args=[pending.pk])
    response = curator.post(url, {"reason_code": "wrong_relation", "note": "no\x00pe"})
    assert response.status_code == 400
    assert "The form field “note” holds a NUL byte" in words_of(response)
    pending.refresh_from_db()
    assert pending.status == "pending" and not Decision.objects.exists()


def test_an_edits_target_name_with_a_nul_changes_nothing(curator, pending):
    data = {"target_name": "Vec\x00tors", "relation": "prerequisite", "version": pending.version}
    response = curator.post(reverse("review:edit", args=[pending.pk]), data)
    assert response.status_code == 400
    assert "The form field “target_name” holds a NUL byte" in words_of(response)
    pending.refresh_from_db()
    assert pending.status == "pending" and pending.payload["target"]["name"] == "Vector search"


def test_a_token_name_with_a_nul_makes_no_token(curator):
    response = curator.post(reverse("api-tokens"), {"name": "bot\x00"})
    assert response.status_code == 400
    assert not ApiToken.objects.exists()


def test_a_bulk_note_with_a_nul_applies_nothing(curator, pending):
    data = {"action": "reject", "note": "all\x00 wrong", "ids": [pending.pk], "step": "apply"}
    response = curator.post(reverse("review:bulk"), data)
    assert response.status_code == 400
    pending.refresh_from_db()
    assert pending.status == "pending"


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"q": "a\x07b"}, "a control character (U+0007)"),
        ({"q": "del\x7f"}, "a DEL character"),
        ({"q": "c1\x85"}, "a control character (U+0085)"),
        ({"q\x00": "x"}, "A query parameter’s name holds a NUL byte"),
    ],
)
def test_other_control_characters_and_bad_names_are_refused_too(curator, params, words):
    response = curator.get("/concepts/", params)
    assert response.status_code == 400
    assert words in words_of(response)


def test_tab_newline_and_carriage_return_are_text(curator, pending):
    data = {"reason_code": "wrong_relation", "note": "line one\r\n\tline two"}
    response = curator.post(reverse("review:reject", args=[pending.pk]), data)
    assert response.status_code in (200, 302)
    assert Decision.objects.filter(proposal=pending).exists()


def test_a_lone_surrogate_or_a_control_in_a_file_name_is_refused():
    """Neither arrives through Django's own parsers (query strings are decoded with
    replacement, file names lose unprintable characters), but the check holds anyway."""
    factory = RequestFactory()
    request = factory.get("/concepts/")
    request.GET = QueryDict(mutable=True)
    request.GET["q"] = "half \ud800 a pair"
    assert "a lone surrogate (U+D800)" in control_problem(request)
    upload = factory.post("/anything/", {"doc": SimpleUploadedFile("x.md", b"text")})
    upload._post = QueryDict()
    upload._files = MultiValueDict({"doc": [SimpleUploadedFile("bad\x1bname.md", b"text")]})
    words = control_problem(upload)
    assert words.startswith("The name of the file sent as “doc” holds an escape character")


def test_the_shared_text_field_still_drops_controls_for_forms_bound_elsewhere():
    assert TextField().clean("a\x00b\x1bc\td") == "abc\td"


# --- numbers ---------------------------------------------------------------------------


@pytest.mark.parametrize("weight", ["inf", "1e400", "-inf", "nan"])
def test_an_infinite_weight_in_an_edit_is_refused_in_words(curator, pending, weight):
    data = {"weight": weight, "relation": "prerequisite", "version": pending.version}
    response = curator.post(reverse("review:edit", args=[pending.pk]), data, follow=True)
    assert response.status_code < 500
    assert "Confidence and weight must be numbers." in words_of(response)
    pending.refresh_from_db()
    assert pending.status == "pending"


def test_a_weight_past_the_bound_is_refused_in_words(curator, pending):
    data = {"weight": "1e300", "relation": "prerequisite", "version": pending.version}
    response = curator.post(reverse("review:edit", args=[pending.pk]), data, follow=True)
    assert "Weight must lie between 0 and 1000." in words_of(response)
    pending.refresh_from_db()
    assert pending.status == "pending"


def test_a_payload_weight_must_be_finite_and_bounded(f):
    from kgreview.core.errors import DomainError
    from kgreview.review.kinds import kind_of

    kind = kind_of("add_edge")
    payload = {
        "source": {"name": "A", "match": "new"},
        "target": {"name": "B", "match": "new"},
        "relation": "prerequisite",
    }
    for weight in (float("inf"), float("nan"), 1e400, 1001.0, -1.0):
        with pytest.raises((DomainError, ValueError)):
            kind.validate({**payload, "weight": weight})
    assert kind.validate({**payload, "weight": 2.5})["weight"] == 2.5


@pytest.mark.parametrize(
    "url",
    [
        f"/review/?run={HUGE}",
        f"/review/focus/?run={HUGE}",
        f"/review/counts/?run={HUGE}",
        f"/review/?sort=newest&after={HUGE}",
        f"/review/?sort=newest&before={HUGE}",
        f"/review/focus/?sort=newest&after={HUGE}",
        f"/review/?after={HUGE}:{HUGE}",
        f"/review/?sort=confidence&after=1e400:{HUGE}",
        "/review/?run=-1",
        "/review/?run=²",
    ],
)
def test_huge_run_ids_and_cursors_are_read_as_nothing_chosen(curator, pending, url):
    """On SQLite these were 500s ("Python int too large to convert to SQLite INTEGER")."""
    response = curator.get(url)
    assert response.status_code == 200


def test_a_run_that_is_no_run_id_is_said_in_words(curator):
    response = curator.get("/review/", {"run": HUGE})
    assert "The agent run must be a number: a run&#x27;s id, from 1." in response.content.decode()


@pytest.mark.parametrize(
    "url",
    [
        f"/agents/runs/{HUGE}/",
        f"/concepts/{HUGE}/",
        f"/review/p/{HUGE}/",
        f"/review/edges/{HUGE}/",
        f"/explore/{HUGE}/",
        f"/api/v1/concepts/{HUGE}",
        f"/api/v1/edges/{HUGE}",
        f"/api/v1/path?from_id={HUGE}&to_id=1",
        "/review/focus/?id=²",
    ],
)
def test_ids_larger_than_any_row_are_not_found(curator, url):
    assert curator.get(url).status_code == 404


@pytest.mark.parametrize("version", ["²", HUGE, "-1", "1e400"])
def test_a_version_that_is_no_number_is_never_a_server_error(curator, pending, version):
    response = curator.post(reverse("review:accept", args=[pending.pk]), {"version": version})
    assert response.status_code < 500


def test_the_number_readers_take_only_finite_ascii_numbers_in_range():
    assert parse_int("12") == 12 and parse_int(" -3 ") == -3
    assert parse_int("²") is None and parse_int("١٢") is None and parse_int(HUGE) is None
    assert parse_int(str(BIGGEST_INT)) == BIGGEST_INT
    assert parse_row_id("0") is None and parse_row_id("-1") is None and parse_row_id("7") == 7
    assert parse_finite("1e400") is None and parse_finite("nan") is None
    assert parse_finite("inf") is None and parse_finite("0.25") == 0.25


def test_proposal_ids_in_payloads_are_bounded(f):
    from kgreview.core.errors import DomainError
    from kgreview.review.kinds import kind_of

    with pytest.raises((DomainError, ValueError)):
        kind_of("invalidate_edge").validate({"edge_id": 2**63, "reason_code": "manual"})
    assert kind_of("invalidate_edge").validate({"edge_id": 2**63 - 1, "reason_code": "manual"})
    assert Proposal.objects.count() == 0
