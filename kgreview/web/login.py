"""Login throttling (django-axes) as people see it: the lockout page in words, and the
client address it counts failures against."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def _minutes(cool_off) -> int:
    return max(1, round(cool_off.total_seconds() / 60))


def locked_out(
    request: HttpRequest, response: HttpResponse | None = None, credentials: dict | None = None
) -> HttpResponse:
    """The login page again, saying why this login is refused and for how long (429).

    django-axes calls this when a username has failed too often from one address. The
    words do not say whether the account exists: unknown names are locked out the same.
    """
    username = (credentials or {}).get("username") or request.POST.get("username", "")
    form = AuthenticationForm(request, initial={"username": username})
    return render(
        request,
        "login.html",
        {
            "form": form,
            "locked_out": True,
            "cooloff_minutes": _minutes(settings.AXES_COOLOFF_TIME),
            "next": request.POST.get("next", ""),
        },
        status=429,
    )


def client_ip(request: HttpRequest) -> str | None:
    """The address failures are counted against: the socket's peer, or behind a reverse
    proxy (``KG_CLIENT_IP_HEADER``) the last address that proxy wrote into its header."""
    header = settings.KG_CLIENT_IP_HEADER
    if header:
        key = "HTTP_" + header.upper().replace("-", "_")
        forwarded = [a.strip() for a in request.META.get(key, "").split(",") if a.strip()]
        if forwarded:
            return forwarded[-1]
    return request.META.get("REMOTE_ADDR")
