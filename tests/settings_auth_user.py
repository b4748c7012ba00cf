"""The example project with Django's own ``auth.User`` as the user model (issue 13: any user model).

python -m pytest --ds=tests.settings_auth_user tests/test_*.py
"""

from project.settings import *  # noqa: F401,F403

AUTH_USER_MODEL = "auth.User"
