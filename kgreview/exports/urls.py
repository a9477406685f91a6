from django.urls import path

from . import views

app_name = "exports"

urlpatterns = [
    path("", views.home, name="home"),
    path("download/", views.download, name="download"),
    path("context.jsonld", views.context_document, name="context"),
]
