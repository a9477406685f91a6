"""The graph's own pages. Included at the site root without a namespace, so the names
(``source-original``, ``concepts``, ``relation-action``, ``concept-type-action``) read
as they always have."""

from django.urls import path

from . import attribute_views, pattern_views, views

urlpatterns = [
    path("sources/<slug:slug>/original/", views.source_original, name="source-original"),
    path("concepts/", views.concepts, name="concepts"),
    path("ontology/<int:pk>/", views.relation_action, name="relation-action"),
    path("ontology/types/<int:pk>/", views.concept_type_action, name="concept-type-action"),
    path("ontology/patterns/", pattern_views.pattern_add, name="pattern-add"),
    path("ontology/patterns/<int:pk>/", pattern_views.pattern_action, name="pattern-action"),
    path("ontology/attributes/", attribute_views.attribute_add, name="attribute-add"),
    path(
        "ontology/attributes/<int:pk>/", attribute_views.attribute_action, name="attribute-action"
    ),
]
