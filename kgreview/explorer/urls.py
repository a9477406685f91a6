from django.urls import path

from . import views

app_name = "explorer"

urlpatterns = [
    path("", views.home, name="home"),
    path("changes/", views.changes, name="changes"),
    path("ask/", views.ask, name="ask"),
    path("<int:pk>/", views.concept, name="concept"),
]
