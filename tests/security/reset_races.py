"""Shared by the attacks that race a password reset against another request (attacks 17c, 17d).

The interleaving is forced, not hoped for: a wrapper on the test's database connection runs the
owner's reset right after the racing request has read what it will act on.
"""

import re

from django.core import mail
from django.db import connection

from authservice import auth
from tests.conftest import ApiClient


def mailed_reset_token(email):
    """Ask for a reset of ``email`` and return the token from the link mailed to it."""
    mail.outbox.clear()
    assert ApiClient().api_post("/request-password-reset", {"email": email}).status_code == 200
    return re.search(r"/reset-password/([A-Za-z0-9]+)", mail.outbox[-1].body).group(1)


def reset_lands_after(token, new_password, is_the_moment):
    """A context manager: the first statement for which ``is_the_moment(sql)`` is true is followed at
    once by the owner's reset (``token``, ``new_password``), which must succeed."""
    done = []

    def wrapper(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        if not done and is_the_moment(sql):
            done.append(True)
            assert auth.api.reset_password(body={"token": token, "newPassword": new_password}) == {"status": True}
        return result

    return connection.execute_wrapper(wrapper)


def reads_the_credential(sql):
    """The racing request has read the credential account (its password check comes next)."""
    lowered = sql.lower()
    return lowered.lstrip().startswith("select") and "authservice_account" in lowered


def claims_a_verification_row(sql):
    """The racing request has claimed its challenge (the first DELETE of a verification row)."""
    return sql.lstrip().upper().startswith("DELETE") and "verification" in sql.lower()
