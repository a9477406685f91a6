"""ASK: answer a question from the graph with cited paths, and say so when it cannot.

plan -> retrieve -> critique -> (refine -> critique)* -> answer, each a small function
with frozen values between them (``types``); the graph, the names and the model are
reached through the Protocols in ``protocols``. Pure: no Django.
"""
