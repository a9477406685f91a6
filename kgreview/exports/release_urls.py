"""The releases' stable addresses: /releases/, /releases/<name>/, its files."""

from django.urls import path

from . import release_views

app_name = "releases"

urlpatterns = [
    path("", release_views.index, name="index"),
    path("cut/", release_views.cut, name="cut"),
    path("builds/<int:pk>/retry/", release_views.retry, name="retry"),
    path("<str:name>/", release_views.detail, name="detail"),
    path("<str:name>/files/<str:filename>", release_views.download, name="file"),
]
