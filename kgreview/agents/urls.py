from django.urls import path

from . import bootstrap_views, views

app_name = "agents"

urlpatterns = [
    path("", views.agents_home, name="home"),
    path("run/<str:agent>/", views.run_now, name="run-now"),
    path("runs/<int:pk>/", views.run_detail, name="run"),
    path("runs/<int:pk>/cancel/", views.run_cancel, name="cancel"),
    path("bootstrap/", bootstrap_views.bootstrap_start, name="bootstrap"),
    path("bootstrap/panel/", bootstrap_views.bootstrap_panel, name="bootstrap-panel"),
    path("schedules/<int:pk>/toggle/", views.schedule_toggle, name="schedule-toggle"),
]
