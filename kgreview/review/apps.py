from django.apps import AppConfig


class ReviewConfig(AppConfig):
    name = "kgreview.review"
    label = "review"
    default_auto_field = "django.db.models.BigAutoField"
