"""The curation log's actions for the review app (``kgreview.core.audit``)."""

from kgreview.core.audit import action

action("vocabulary.install", "a relation vocabulary installed", "vocabulary")
action(
    "relation_type.double_review",
    "the share of a relation's proposals two reviewers decide changed",
    "relationtype",
)
action("assignment.create", "part of the queue assigned", "assignment")
action("assignment.close", "an assignment closed", "assignment")
action("comment.post", "a comment written on a proposal", "comment")
action("comment.edit", "a comment changed by its author", "comment")
action("discussion.open", "a card marked as needing discussion", "discussion")
action("discussion.resolve", "a card's discussion resolved", "discussion")
action("example.add", "a decided proposal made an example of a type", "example")
action("example.retire", "an example retired", "example")
