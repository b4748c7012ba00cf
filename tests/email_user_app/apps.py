from django.apps import AppConfig


class EmailUserConfig(AppConfig):
    name = "tests.email_user_app"
    label = "email_user_app"
    default_auto_field = "django.db.models.BigAutoField"
