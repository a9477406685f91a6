from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "kgreview.agents"
    label = "agents"
    default_auto_field = "django.db.models.BigAutoField"
