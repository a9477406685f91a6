from django.urls import path

from kgreview.review.workspace import batch_views, decide_views, mend_views, views

app_name = "review"

urlpatterns = [
    path("", views.queue, name="queue"),
    path("focus/", views.focus, name="focus"),
    path("counts/", views.queue_counts, name="queue-counts"),
    path("p/<int:pk>/", views.proposal_detail, name="proposal"),
    path("p/<int:pk>/accept/", decide_views.accept, name="accept"),
    path("p/<int:pk>/reject/", decide_views.reject, name="reject"),
    path("p/<int:pk>/edit/", decide_views.edit, name="edit"),
    path("undo/", batch_views.undo, name="undo"),
    path("bulk/", batch_views.bulk, name="bulk"),
    path("concepts/", views.concept_search, name="concept-search"),
    path("decisions/", views.decision_log, name="decisions"),
    path("edges/<int:pk>/", views.edge_detail, name="edge"),
    path("edges/<int:pk>/retire/", mend_views.edge_retire, name="edge-retire"),
    path("mend/edges/new/", mend_views.edge_add, name="edge-add"),
    path("mend/concepts/<int:pk>/merge/", mend_views.concept_merge, name="concept-merge"),
    path("mend/concepts/<int:pk>/names/", mend_views.concept_names, name="concept-names"),
    path("mend/concepts/<int:pk>/type/", mend_views.concept_type, name="concept-type"),
]
