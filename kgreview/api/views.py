"""The API tokens page: make a read-only token (shown once), see and revoke yours."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from kgreview.core.errors import DomainError
from kgreview.core.permissions import view_required

from . import services
from .forms import TokenForm
from .models import ApiToken


@never_cache
@require_http_methods(["GET", "POST"])
@login_required
@view_required
def tokens(request: HttpRequest) -> HttpResponse:
    issued = None
    error = ""
    status = 200
    typed = ""
    if request.method == "POST":
        form = TokenForm(request.POST)
        typed = form.data.get("name", "")
        if not form.is_valid():
            error, status = form.error_in_words(), 400
        else:
            try:
                issued = services.api_token_create(
                    owner=request.user, name=form.cleaned_data["name"], acting_user=request.user
                )
            except DomainError as exc:
                error, status = exc.message, 400
    rows = ApiToken.objects.filter(user=request.user).order_by("-created_at", "-id")
    return render(
        request,
        "api/tokens.html",
        {
            "tokens": rows,
            "issued": issued,
            "error": error,
            # After a token is made the form starts empty again; after an error it keeps
            # what was typed.
            "name": "" if issued else typed,
        },
        status=status,
    )


@require_POST
@login_required
@view_required
def token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    token = get_object_or_404(ApiToken, pk=pk, user=request.user)
    try:
        services.api_token_revoke(token=token, acting_user=request.user)
        messages.success(request, f"Revoked {token.name}; agents using it are now refused.")
    except DomainError as exc:
        messages.error(request, exc.message)
    return redirect("api-tokens")
