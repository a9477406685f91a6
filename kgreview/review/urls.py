from django.urls import path

from kgreview.review.workspace import (
    batch_views,
    decide_views,
    mend_views,
    talk_views,
    team_views,
    views,
)

app_name = "review"

urlpatterns = [
    path("", views.queue, name="queue"),
    path("focus/", views.focus, name="focus"),
    path("counts/", views.queue_counts, name="queue-counts"),
    path("p/<int:pk>/", views.proposal_detail, name="proposal"),
    path("p/<int:pk>/accept/", decide_views.accept, name="accept"),
    path("p/<int:pk>/reject/", decide_views.reject, name="reject"),
    path("p/<int:pk>/edit/", decide_views.edit, name="edit"),
    path("p/<int:pk>/guideline/", talk_views.guideline, name="guideline"),
    path("p/<int:pk>/comments/", talk_views.comments, name="comments"),
    path("p/<int:pk>/discuss/", talk_views.discuss, name="discuss"),
    path("p/<int:pk>/resolve/", talk_views.resolve, name="resolve"),
    path("p/<int:pk>/example/", talk_views.example_add, name="example-add"),
    path("comments/<int:comment_id>/edit/", talk_views.comment_edit, name="comment-edit"),
    path("examples/<int:example_id>/retire/", talk_views.example_retire, name="example-retire"),
    path("undo/", batch_views.undo, name="undo"),
    path("leases/renew/", team_views.lease_renew, name="lease-renew"),
    path("team/", team_views.team, name="team"),
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
