from django.urls import path

from . import views
from .api import api

urlpatterns = [
    path("tokens/", views.tokens, name="api-tokens"),
    path("tokens/<int:pk>/revoke/", views.token_revoke, name="api-token-revoke"),
    path("", api.urls),
]
