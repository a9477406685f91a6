"""The read API's frame: the NinjaAPI object, who may call it, how refusals are said,
and how answers are rendered. The operations themselves live in ``endpoints/``, one
module per subject; ``kgreview.api.api`` gathers them.
"""

from __future__ import annotations

import inspect
import math
from functools import wraps

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponseBase, JsonResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, Throttled
from ninja.security import HttpBearer, SessionAuth

from kgreview.core import refusals
from kgreview.core.errors import DomainError
from kgreview.core.permissions import can_view

from . import schemas as s
from .services import api_token_authenticate
from .throttle import EVERY


class BearerToken(HttpBearer):
    """``Authorization: Bearer kgr_…``: a token made on the API tokens page or with
    ``manage.py api_token create`` (scope ``read``, or ``propose`` to submit proposals)."""

    def authenticate(self, request: HttpRequest, token: str):
        found = api_token_authenticate(secret=token)
        if found is None or not can_view(found.user):
            return None
        request.user = found.user
        request.api_token = found
        return found.user


DESCRIPTION = """
Read the reviewed knowledge graph: search concepts, walk neighbourhoods, find paths,
build learning paths, explain edges, and travel in time; and submit proposals for review
(`POST /api/v1/proposals`), which wait in the review queue like the agents' own.

**Authentication.** Every operation needs either an API token
(`Authorization: Bearer kgr_…`, made on the *API tokens* page or with
`manage.py api_token create`) or a signed-in browser session. Proposing needs a token
with the `propose` scope (`manage.py api_token create --user U --name N --scope
propose`); a `read` token is refused with 403.

**Time travel.** Every graph read takes `as_of` (ISO 8601). Without it the answer is the
live graph; with it, the graph as it stood at that instant: edges recorded and valid by
then and not yet retired, concepts not yet merged or retired.
"""


class BrowserSession(SessionAuth):
    """A signed-in browser session (the explorer); GETs need no CSRF token."""

    def authenticate(self, request: HttpRequest, key: str | None):
        user = super().authenticate(request, key)
        return user if user is not None and can_view(user) else None


class GraphApi(NinjaAPI):
    """The NinjaAPI, with operation ids that do not depend on which module holds them.

    Clients generated from the published schema call operations by these ids; they were
    named after ``kgreview.api.api`` when every operation lived there, and stay so.
    """

    def get_openapi_operation_id(self, operation) -> str:
        return "kgreview_api_api_" + operation.view_func.__name__


NO_ROLE_WORDS = "Your account has no role yet; ask a curator for one."


def docs_access(view):
    """The schema (``/api/openapi.json``) and the docs page (``/api/docs``) for those who
    may call the API: a signed-in user with a role, or, for the schema, a live token.
    ``KG_API_DOCS_PUBLIC=true`` opens both to anyone. Refused in words: the schema with
    a JSON 401 or 403, the page by the login page or a 403 page."""

    @wraps(view)
    def guarded(request: HttpRequest, *args, **kwargs):
        if settings.KG_API_DOCS_PUBLIC:
            return view(request, *args, **kwargs)
        user = request.user
        if not user.is_authenticated:
            header = request.headers.get("Authorization", "")
            scheme, _, secret = header.partition(" ")
            if scheme.lower() == "bearer" and (
                BearerToken().authenticate(request, secret.strip()) is not None
            ):
                return view(request, *args, **kwargs)
        if user.is_authenticated and can_view(user):
            return view(request, *args, **kwargs)
        is_schema = request.path.endswith(".json")
        if not user.is_authenticated:
            if is_schema:
                return JsonResponse(
                    {
                        "detail": "The API's schema is for its callers: send "
                        "Authorization: Bearer <token>, or sign in to a browser session "
                        "with a role."
                    },
                    status=401,
                )
            return redirect_to_login(request.get_full_path())
        if is_schema:
            return JsonResponse({"detail": NO_ROLE_WORDS}, status=403)
        raise PermissionDenied(NO_ROLE_WORDS)

    return guarded


api = GraphApi(
    title="kgreview graph API",
    version="1",
    description=DESCRIPTION,
    urls_namespace="api",
    auth=[BearerToken(), BrowserSession()],
    throttle=[EVERY],
    docs_decorator=docs_access,
)


class ApiError(Exception):
    """A refusal with its status and the words the caller reads in ``detail``."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


@api.exception_handler(ApiError)
def _api_error(request, exc: ApiError):
    return api.create_response(request, {"detail": exc.detail}, status=exc.status)


@api.exception_handler(DomainError)
def _refused(request, exc: DomainError):
    """A service's refusal, said as every refusal is (``core.refusals``): its words, code
    and status."""
    return refusals.answer(request, exc)


@api.exception_handler(AuthenticationError)
def _unauthenticated(request, exc):
    return api.create_response(
        request,
        {
            "detail": "Authentication needed: send Authorization: Bearer <token> (make one "
            "on the API tokens page or with manage.py api_token create), or sign in to a "
            "browser session with a role. Revoked tokens and accounts without a role are "
            "refused."
        },
        status=401,
    )


@api.exception_handler(Throttled)
def _throttled(request, exc: Throttled):
    wait = max(1, math.ceil(exc.wait)) if exc.wait else None
    return api.create_response(
        request,
        {
            "detail": "Too many requests from this account: the API's rate limit "
            "(KG_API_RATE, and KG_API_HEAVY_RATE for walks, diffs and agreement, counted per "
            "account across all its tokens and its browser session; KG_API_PROPOSE_RATE for "
            "batches of proposals, counted per token) is spent for now."
            + (f" Try again in {wait} seconds (Retry-After)." if wait else "")
        },
        status=429,
    )


def served(view):
    """Render the view's dict straight to JSON.

    The response schema stays declared (it is what the OpenAPI document publishes and
    what the schemathesis tests hold every answer to), but re-validating thousands of
    nested fields on each request would cost more than the graph query itself.

    The wrapper carries the view's signature with its annotations already evaluated:
    ninja reads parameter types in the wrapper's module, which is this one, not the
    endpoint's.
    """

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        result = view(request, *args, **kwargs)
        if isinstance(result, HttpResponseBase):
            return result
        return api.create_response(request, result, status=200)

    wrapped.__signature__ = inspect.signature(view, eval_str=True)
    return wrapped


def answers(ok, *codes: int) -> dict:
    """The documented responses: the answer, the refusals every operation can give
    (400 for a parameter the graph cannot answer, such as an instant out of range; 401
    without credentials; 422 for a malformed parameter; 429 when the token's rate limit
    is spent) and the ones listed."""
    out = {200: ok, 400: s.Error, 401: s.Error, 422: s.ValidationErrorOut, 429: s.Error}
    for code in codes:
        out[code] = s.Error
    return out
