"""The dashboard's numbers, every one aggregated by the database.

Each selector runs a fixed handful of GROUP BY queries. Their results grow with the
number of days, reviewers, relation types, agents, models and confidence steps, never
with the number of proposals; the Python that follows only walks those aggregates, so
the page costs the same few queries with 100 proposals or 100,000. Portable: SQLite and
PostgreSQL.

What "the model said" means here: an edit-and-accept may overwrite a proposal's
confidence and relation, so calibration and acceptance read them as the agent proposed
them, from the first edit decision's ``before`` when there is one.

By subject: ``activity`` (the queue and the reviewers day by day), ``decided`` (what
became of decided proposals: acceptance, calibration and confidence gates) and ``rates``
(the values those are told in, with their arithmetic).
"""
