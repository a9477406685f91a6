from django.apps import AppConfig


class WebConfig(AppConfig):
    name = "kgreview.web"
    verbose_name = "Pages that combine apps"

    def ready(self) -> None:
        from kgreview.core import links

        # The pages lower apps link to by role (a review card to a concept, an agent run
        # to a source, the graph's pages back to the ontology and the start page).
        links.provide("home", "home")
        links.provide("concept", "concept-detail")
        links.provide("source", "source-detail")
        links.provide("ontology", "ontology")
