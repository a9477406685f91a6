from django.apps import AppConfig


class WebConfig(AppConfig):
    name = "kgreview.web"
    verbose_name = "Pages that combine apps"
