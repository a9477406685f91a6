from django.urls import path

from . import views

app_name = "agents"

urlpatterns = [
    path("", views.agents_home, name="home"),
    path("run/<str:agent>/", views.run_now, name="run-now"),
    path("runs/<int:pk>/", views.run_detail, name="run"),
    path("runs/<int:pk>/cancel/", views.run_cancel, name="cancel"),
    path("schedules/<int:pk>/toggle/", views.schedule_toggle, name="schedule-toggle"),
]
