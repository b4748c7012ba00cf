"""Project hooks that are classes rather than signals: sending mail.

Set ``AUTHSERVICE["adapter"]`` to the dotted path of a subclass to change how mails are sent (for
example through a task queue); the default renders Django templates and uses Django's mail backend.
"""

from __future__ import annotations

import functools
from typing import Any

from django.utils.module_loading import import_string

from authservice import app_settings


class DefaultAdapter:
    def send_mail(self, kind: str, to: str, context: dict[str, Any]) -> None:
        """Send mail ``kind`` (verify-email, reset-password, ...) to ``to``; see authservice.mail."""
        from authservice import mail

        mail.send(kind, to, context)

    def populate_username(self, user: Any) -> None:
        """Give a new ``user`` its username, for models whose ``USERNAME_FIELD`` is not the e-mail
        (``auth.User``): the e-mail when it fits and no one has it, else a unique variant of its
        local part. Override to name users another way; the value must be unique."""
        from authservice import tokens, users

        email = users.email_of(user)
        limit = users.username_max_length()
        candidate = email
        if not (email and len(email) <= limit and users.username_is_free(email)):
            base = (email.partition("@")[0] or "user")[:max(limit - 9, 1)]
            candidate = f"{base}-{tokens.random_string(8, tokens.LOWER_ALNUM)}"
            while not users.username_is_free(candidate):
                candidate = f"{base}-{tokens.random_string(8, tokens.LOWER_ALNUM)}"
        setattr(user, type(user).USERNAME_FIELD, candidate)


@functools.lru_cache(maxsize=1)
def _adapter_class() -> type[DefaultAdapter]:
    return import_string(app_settings.adapter)


def get_adapter() -> DefaultAdapter:
    return _adapter_class()()
