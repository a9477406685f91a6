from django.apps import AppConfig


class ExportsConfig(AppConfig):
    name = "kgreview.exports"
    label = "exports"
    default_auto_field = "django.db.models.BigAutoField"
