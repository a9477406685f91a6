from django.urls import path

from . import views

app_name = "questions"

urlpatterns = [
    path("", views.questions_home, name="home"),
    path("add/", views.question_add, name="add"),
    path("run/", views.run_now, name="run-now"),
    path("schedule/", views.schedule_toggle, name="schedule-toggle"),
    path("<int:pk>/", views.question_detail, name="detail"),
    path("<int:pk>/edit/", views.question_edit, name="edit"),
    path("<int:pk>/retire/", views.question_retire, name="retire"),
    path("<int:pk>/reactivate/", views.question_reactivate, name="reactivate"),
]
