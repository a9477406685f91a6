"""URL map. Every page but login and the health check needs a signed-in user."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from kgreview.review.workspace import mend_views

urlpatterns = [
    # Pages that combine apps (home, sources, a concept, the ontology, the curation log)
    # and the graph's own pages, both without a namespace.
    path("", include("kgreview.web.urls")),
    path("", include("kgreview.graph.urls")),
    # Curators' changes to a concept are decisions: they live with the review services.
    path("concepts/<int:pk>/unmerge/", mend_views.concept_unmerge, name="concept-unmerge"),
    path("concepts/<int:pk>/status/", mend_views.concept_status, name="concept-status"),
    path("review/", include("kgreview.review.urls")),
    path("agents/", include("kgreview.agents.urls")),
    path("questions/", include("kgreview.questions.urls")),
    path("api/", include("kgreview.api.urls")),
    path("exports/", include("kgreview.exports.urls")),
    path("releases/", include("kgreview.exports.release_urls")),
    path("insights/", include("kgreview.insights.urls")),
    path("explore/", include("kgreview.explorer.urls")),
    path(
        "login/",
        auth_views.LoginView.as_view(template_name="login.html", redirect_authenticated_user=True),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
]
