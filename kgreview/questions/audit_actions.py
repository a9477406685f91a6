"""The curation log's actions for competency questions (``kgreview.core.audit``)."""

from kgreview.core.audit import action

action("competency_question.create", "a competency question added", "competencyquestion")
action("competency_question.edit", "a competency question edited", "competencyquestion")
action("competency_question.retire", "a competency question retired", "competencyquestion")
action("competency_question.reactivate", "a retired question brought back", "competencyquestion")
action("competency_run.start", "competency questions asked by hand", "competencyrun")
