"""The construction loop (Read-Search-Verify-Construct) as pure Python.

Nothing in this package imports Django or touches a database: a snapshot of the graph
goes in, proposal drafts and dropped candidates come out. The Django side
(``kgreview.agents``) persists what comes out.
"""

__all__: list[str] = []
