"""The API's operations, one module per subject; importing a module registers its
operations on ``app.api`` (``kgreview.api.api`` imports them in the published order)."""
