"""The curation log's actions for the exports (``kgreview.core.audit``)."""

from kgreview.core.audit import action

action("release.request", "a release asked for", "releasebuild")
action("release.create", "a release cut", "release")
