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


@functools.lru_cache(maxsize=1)
def _adapter_class() -> type[DefaultAdapter]:
    return import_string(app_settings.adapter)


def get_adapter() -> DefaultAdapter:
    return _adapter_class()()
