"""The example project with a custom user model that has an e-mail and little else (tests/email_user_app).

python -m pytest --ds=tests.settings_email_user tests/test_sign_up.py ...
"""

from project.settings import *  # noqa: F401,F403
from project.settings import INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "tests.email_user_app"]
AUTH_USER_MODEL = "email_user_app.EmailUser"
