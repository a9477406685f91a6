from django.urls import path

from . import views
from .api import api
from .mcp.http import mcp_endpoint

urlpatterns = [
    path("tokens/", views.tokens, name="api-tokens"),
    path("tokens/<int:pk>/revoke/", views.token_revoke, name="api-token-revoke"),
    path("mcp", mcp_endpoint, name="api-mcp"),
    path("", api.urls),
]
