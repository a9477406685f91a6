from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "kgreview.core"
    label = "core"
    default_auto_field = "django.db.models.BigAutoField"
    verbose_name = "Audit"
