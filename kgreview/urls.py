"""URL map. Every page but login and the health check needs a signed-in user."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from kgreview.graph import views as graph_views
from kgreview.review import mend_views

urlpatterns = [
    path("", graph_views.home, name="home"),
    # POST /sources/ uploads documents; GET goes back to the list on the home page.
    path("sources/", graph_views.source_upload, name="source-upload"),
    path("sources/<slug:slug>/", graph_views.source_detail, name="source-detail"),
    path("sources/<slug:slug>/original/", graph_views.source_original, name="source-original"),
    path("concepts/", graph_views.concepts, name="concepts"),
    path("concepts/<int:pk>/", graph_views.concept_detail, name="concept-detail"),
    # Curators' changes to a concept are decisions: they live with the review services.
    path("concepts/<int:pk>/unmerge/", mend_views.concept_unmerge, name="concept-unmerge"),
    path("concepts/<int:pk>/status/", mend_views.concept_status, name="concept-status"),
    path("ontology/", graph_views.ontology, name="ontology"),
    path("ontology/<int:pk>/", graph_views.relation_action, name="relation-action"),
    path("review/", include("kgreview.review.urls")),
    path("agents/", include("kgreview.agents.urls")),
    path("api/", include("kgreview.api.urls")),
    path("exports/", include("kgreview.exports.urls")),
    path("insights/", include("kgreview.insights.urls")),
    path("explore/", include("kgreview.explorer.urls")),
    path("status/worker/", graph_views.worker_badge, name="worker-status"),
    path("healthz", graph_views.healthz, name="healthz"),
    path(
        "login/",
        auth_views.LoginView.as_view(template_name="login.html", redirect_authenticated_user=True),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
]
