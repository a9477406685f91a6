"""The curation log's actions for the review app (``kgreview.core.audit``)."""

from kgreview.core.audit import action

action("vocabulary.install", "a relation vocabulary installed", "vocabulary")
