"""The curation log's actions for the API (``kgreview.core.audit``)."""

from kgreview.core.audit import action

action("api_token.create", "an API token made", "apitoken")
action("api_token.revoke", "an API token revoked", "apitoken")
action("api.propose", "a batch of proposals submitted through the API", "proposalbatch")
