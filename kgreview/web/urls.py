"""Pages that combine apps. Included at the site root without a namespace, so the names
(``home``, ``source-detail``, ``concept-detail``, ``ontology``, ...) read as they always
have."""

from django.urls import path

from . import curation, validation, views, vocabulary_import

urlpatterns = [
    path("", views.home, name="home"),
    # POST /sources/ uploads documents; GET goes back to the list on the home page.
    path("sources/", views.source_upload, name="source-upload"),
    path("sources/<slug:slug>/", views.source_detail, name="source-detail"),
    path("concepts/<int:pk>/", views.concept_detail, name="concept-detail"),
    path("ontology/", views.ontology, name="ontology"),
    path("ontology/validation/", validation.ontology_validation, name="ontology-validation"),
    path("ontology/import/", vocabulary_import.vocabulary_import, name="vocabulary-import"),
    path("curation/", curation.curation_log, name="curation-log"),
    path("status/worker/", views.worker_badge, name="worker-status"),
    path("healthz", views.healthz, name="healthz"),
]
