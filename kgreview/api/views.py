"""The API tokens page: make a token (read, or propose too; shown once), see and revoke
yours."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from kgreview.core.errors import DomainError
from kgreview.core.permissions import view_required
from kgreview.core.refusals import form_refused, said

from . import services
from .forms import TokenForm
from .models import ApiToken


@never_cache
@require_http_methods(["GET", "POST"])
@login_required
@view_required
def tokens(request: HttpRequest) -> HttpResponse:
    rows = ApiToken.objects.filter(user=request.user).order_by("-created_at", "-id")
    # After a token is made the form starts empty again; after an error it keeps what was
    # typed.
    context = {"tokens": rows, "issued": None, "error": "", "name": ""}
    if request.method == "GET":
        return render(request, "api/tokens.html", context)
    form = TokenForm(request.POST)
    context["name"] = form.data.get("name", "")
    if not form.is_valid():
        context["error"] = form.error_in_words()
        return render(request, "api/tokens.html", context, status=400)
    try:
        context["issued"] = services.api_token_create(
            owner=request.user,
            name=form.cleaned_data["name"],
            acting_user=request.user,
            scope=form.cleaned_data["scope"] or ApiToken.Scope.READ,
        )
    except DomainError as exc:
        return form_refused(request, "api/tokens.html", context, exc)
    context["name"] = ""
    return render(request, "api/tokens.html", context)


@require_POST
@login_required
@view_required
def token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    token = get_object_or_404(ApiToken, pk=pk, user=request.user)
    with said(request):
        services.api_token_revoke(token=token, acting_user=request.user)
        messages.success(request, f"Revoked {token.name}; agents using it are now refused.")
    return redirect("api-tokens")
