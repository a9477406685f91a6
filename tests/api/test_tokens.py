"""API tokens: made once, stored hashed, revoked not deleted; page and command."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from kgreview.api.models import ApiToken
from kgreview.api.services import (
    api_token_authenticate,
    api_token_create,
    api_token_revoke,
    token_hash,
)
from kgreview.core.errors import HardDeleteForbidden, StateConflict, ValidationFailed

pytestmark = pytest.mark.django_db


def test_a_token_is_stored_only_as_a_hash(f):
    """The secret never reaches the database; its SHA-256 does."""
    issued = api_token_create(owner=f.user(role="viewer"), name="tutor", acting_user=None)
    row = ApiToken.objects.get()
    assert issued.secret not in (row.key_hash, row.prefix, row.name)
    assert row.key_hash == token_hash(issued.secret)
    assert issued.secret.startswith(f"kgr_{row.prefix}_")


def test_a_token_needs_a_name_in_words(f):
    """A blank name is refused with a hint of what to call it."""
    with pytest.raises(ValidationFailed, match="name"):
        api_token_create(owner=f.user(role="viewer"), name="   ", acting_user=None)


def test_authenticate_accepts_the_secret_and_nothing_else(f):
    """The right secret finds the token; a changed one, a blank one, a revoked one do not."""
    user = f.user(role="viewer")
    issued = api_token_create(owner=user, name="a", acting_user=None)
    assert api_token_authenticate(secret=issued.secret).pk == issued.token.pk
    assert api_token_authenticate(secret=issued.secret[:-1] + "x") is None
    assert api_token_authenticate(secret="") is None
    api_token_revoke(token=issued.token, acting_user=user)
    assert api_token_authenticate(secret=issued.secret) is None


def test_a_token_of_a_deactivated_user_stops_working(f):
    """Deactivating the account ends its tokens too."""
    user = f.user(role="viewer")
    issued = api_token_create(owner=user, name="a", acting_user=None)
    user.is_active = False
    user.save()
    assert api_token_authenticate(secret=issued.secret) is None


def test_revoking_twice_is_refused_and_only_owner_or_staff_may(f):
    """Someone else's token cannot be revoked; a revoked one says so."""
    owner, other = f.user(role="viewer"), f.user(role="reviewer")
    issued = api_token_create(owner=owner, name="a", acting_user=None)
    with pytest.raises(ValidationFailed, match="owner"):
        api_token_revoke(token=issued.token, acting_user=other)
    api_token_revoke(token=issued.token, acting_user=owner)
    with pytest.raises(StateConflict, match="already revoked"):
        api_token_revoke(token=issued.token, acting_user=owner)


def test_tokens_are_never_deleted(f):
    """Revoked tokens stay for the audit trail."""
    api_token_create(owner=f.user(role="viewer"), name="a", acting_user=None)
    with pytest.raises(HardDeleteForbidden, match="revoke"):
        ApiToken.objects.all().delete()


def test_the_tokens_page_shows_a_new_token_once(f):
    """Making a token shows it on that response only; the list shows its prefix."""
    c = Client()
    c.force_login(f.user(role="viewer"))
    r = c.post("/api/tokens/", {"name": "planner"})
    assert r.status_code == 200
    secret = r.context["issued"].secret
    assert secret in r.content.decode()
    again = c.get("/api/tokens/").content.decode()
    assert secret not in again and "planner" in again
    assert f"kgr_{ApiToken.objects.get().prefix}_" in again


def test_the_tokens_page_makes_a_proposing_token(f):
    """The scope chosen on the page is the token's, and the list shows it."""
    c = Client()
    c.force_login(f.user(role="viewer"))
    r = c.post("/api/tokens/", {"name": "miner", "scope": "propose"})
    assert r.status_code == 200 and ApiToken.objects.get().scope == "propose"
    assert "<td>propose</td>" in c.get("/api/tokens/").content.decode()


def test_the_tokens_page_refuses_an_unknown_scope_in_words(f):
    c = Client()
    c.force_login(f.user(role="viewer"))
    r = c.post("/api/tokens/", {"name": "miner", "scope": "write"})
    assert r.status_code == 400 and "read or propose" in r.content.decode()
    assert not ApiToken.objects.exists()


def test_the_tokens_page_refuses_a_blank_name_with_400(f):
    """A blank name re-renders the form with the error in words."""
    c = Client()
    c.force_login(f.user(role="viewer"))
    r = c.post("/api/tokens/", {"name": ""})
    assert r.status_code == 400 and "Give the token a name" in r.content.decode()


def test_the_tokens_page_revokes_only_your_own_tokens(f):
    """Revoking someone else's token is a 404; your own works and says so."""
    mine, theirs = f.user(role="viewer"), f.user(role="viewer")
    t1 = api_token_create(owner=mine, name="mine", acting_user=None).token
    t2 = api_token_create(owner=theirs, name="theirs", acting_user=None).token
    c = Client()
    c.force_login(mine)
    assert c.post(f"/api/tokens/{t2.pk}/revoke/").status_code == 404
    r = c.post(f"/api/tokens/{t1.pk}/revoke/", follow=True)
    assert "Revoked mine" in r.content.decode()
    t1.refresh_from_db()
    t2.refresh_from_db()
    assert t1.revoked_at is not None and t2.revoked_at is None


def test_the_tokens_page_needs_a_signed_in_user_with_a_role(f):
    """Anonymous users go to login; users without a role get a 403."""
    assert Client().get("/api/tokens/").status_code == 302
    c = Client()
    c.force_login(f.user())
    assert c.get("/api/tokens/").status_code == 403


def test_the_command_makes_lists_and_revokes_tokens(f):
    """create prints the token on stdout alone; list and revoke work by prefix."""
    f.user("bot-owner", role="viewer")
    out = StringIO()
    call_command(
        "api_token",
        "create",
        "--user",
        "bot-owner",
        "--name",
        "tutor",
        stdout=out,
        stderr=StringIO(),
    )
    secret = out.getvalue().strip()
    assert api_token_authenticate(secret=secret) is not None
    out = StringIO()
    call_command("api_token", "list", "--json", stdout=out)
    rows = json.loads(out.getvalue())["tokens"]
    assert [r["name"] for r in rows] == ["tutor"] and rows[0]["revoked_at"] is None
    call_command("api_token", "revoke", rows[0]["prefix"], stdout=StringIO())
    assert api_token_authenticate(secret=secret) is None


def test_the_command_names_an_unknown_user_or_prefix(f):
    """Mistakes are CommandErrors in words."""
    with pytest.raises(CommandError, match="no user called"):
        call_command("api_token", "create", "--user", "ghost", "--name", "x")
    with pytest.raises(CommandError, match="No token starts"):
        call_command("api_token", "revoke", "deadbeef")


# --- The curation log -------------------------------------------------------------------


def _logged_text(row) -> str:
    return json.dumps([row.summary, row.before, row.after], ensure_ascii=False)


def test_making_a_token_writes_one_audit_row_without_the_secret(f):
    """One api_token.create row names who made which token for whom; the secret (and its
    prefix) appear nowhere in it."""
    from kgreview.core.models import AuditEntry

    owner, staff = f.user("olga", role="viewer"), f.user("sam", role="curator")
    issued = api_token_create(owner=owner, name="tutor", acting_user=staff)
    (row,) = AuditEntry.objects.all()
    assert (row.user, row.action, row.subject_type, row.subject_id) == (
        staff,
        "api_token.create",
        "apitoken",
        str(issued.token.pk),
    )
    assert row.after == {"id": issued.token.pk, "name": "tutor", "owner": "olga", "scope": "read"}
    assert "tutor" in row.summary and "olga" in row.summary
    logged = _logged_text(row)
    assert issued.secret not in logged and issued.token.prefix not in logged
    assert issued.token.key_hash not in logged


def test_revoking_a_token_writes_one_audit_row_without_the_secret(f):
    """One api_token.revoke row, by the user who revoked, with the revocation time after."""
    from kgreview.core.models import AuditEntry

    owner = f.user("olga", role="viewer")
    issued = api_token_create(owner=owner, name="tutor", acting_user=owner)
    api_token_revoke(token=issued.token, acting_user=owner)
    row = AuditEntry.objects.get(action="api_token.revoke")
    token = ApiToken.objects.get()
    assert (row.user, row.subject_id) == (owner, str(token.pk))
    assert row.before["revoked_at"] is None
    assert row.after["revoked_at"] == token.revoked_at.isoformat()
    assert row.after["owner"] == "olga" and "tutor" in row.summary
    logged = _logged_text(row)
    assert issued.secret not in logged and token.prefix not in logged
    assert AuditEntry.objects.count() == 2


def test_a_refused_create_or_revoke_writes_no_audit_row(f):
    """A blank name, someone else's token, a second revocation: no row for any."""
    from kgreview.core.models import AuditEntry

    owner, other = f.user(role="viewer"), f.user(role="reviewer")
    with pytest.raises(ValidationFailed):
        api_token_create(owner=owner, name=" ", acting_user=owner)
    assert AuditEntry.objects.count() == 0
    issued = api_token_create(owner=owner, name="a", acting_user=owner)
    with pytest.raises(ValidationFailed):
        api_token_revoke(token=issued.token, acting_user=other)
    api_token_revoke(token=issued.token, acting_user=owner)
    with pytest.raises(StateConflict):
        api_token_revoke(token=issued.token, acting_user=owner)
    assert list(AuditEntry.objects.order_by("id").values_list("action", flat=True)) == [
        "api_token.create",
        "api_token.revoke",
    ]


def test_the_page_and_the_command_log_who_acted(f):
    """The page records the signed-in user; the command line records the system."""
    from kgreview.core.models import AuditEntry

    viewer = f.user("vera", role="viewer")
    c = Client()
    c.force_login(viewer)
    secret = c.post("/api/tokens/", {"name": "planner"}).context["issued"].secret
    token = ApiToken.objects.get()
    c.post(f"/api/tokens/{token.pk}/revoke/")
    out = StringIO()
    call_command(
        "api_token", "create", "--user", "vera", "--name", "cli", stdout=out, stderr=StringIO()
    )
    cli = ApiToken.objects.get(name="cli")
    call_command("api_token", "revoke", cli.prefix, stdout=StringIO())
    rows = list(AuditEntry.objects.order_by("id").values_list("action", "user_id", "subject_id"))
    assert rows == [
        ("api_token.create", viewer.pk, str(token.pk)),
        ("api_token.revoke", viewer.pk, str(token.pk)),
        ("api_token.create", None, str(cli.pk)),
        ("api_token.revoke", None, str(cli.pk)),
    ]
    for row in AuditEntry.objects.all():
        logged = _logged_text(row)
        assert secret not in logged and out.getvalue().strip() not in logged


def test_the_tokens_page_refuses_a_null_character_in_words(f):
    """A name no database can store is a 400 that says why, and no token is made."""
    c = Client()
    c.force_login(f.user(role="viewer"))
    r = c.post("/api/tokens/", {"name": "bad\x00name"})
    assert r.status_code == 400
    assert "The form field “name” holds a NUL byte" in r.content.decode()
    assert not ApiToken.objects.exists()
