"""Mail leaves the request path as tasks of Django's task framework (I7).

A request that may mail someone (sign-up, password reset, e-mail verification, change of e-mail)
enqueues one task whatever the address, and the task decides in the worker whether anyone gets mail:
it looks the account up, and a missing, inactive or changed account gets nothing. So the request path
does the same work for a known and an unknown address, down to the one row a database queue inserts,
and the SMTP conversation happens elsewhere.

Which backend runs them is the project's ``TASKS`` setting. With the database backend
(``django_tasks_db``) each task is a row that survives a restart, and ``python manage.py db_worker``
sends it. With the immediate backend (Django's default) the task runs inside the request: fine for
development and tests, but then the mail's time is part of the answer again.

Task arguments are stored as JSON, so they carry addresses and ids, never model instances; they
carry no token either: tokens are made by the task, so none sits in the queue.
"""

try:  # Django 6 ships the framework; Django 5.2 uses its backport.
    from django.tasks import task
except ImportError:
    from django_tasks import task

# The task bodies live in the flows, which also enqueue these tasks; they are imported when the task
# runs, not here, so that flows and tasks can import each other.


@task()
def reset_password_mail(*, email, base, callback_url, requested_at):
    """Mail a reset link to ``email`` if it belongs to an active user (core.md §4.9)."""
    from authservice.flows import password_reset  # noqa: PLC0415 - see above

    password_reset.deliver(email=email, base=base, callback_url=callback_url,
                           requested_at=requested_at)


@task()
def verification_mail(*, kind, email, base, callback_url, user_id=None, update_to=None,
                      request_type=None):
    """Mail a verification (or change-e-mail) link if the account still fits (core.md §4.7, §4.13)."""
    from authservice.flows import verification  # noqa: PLC0415 - see above

    verification.deliver(kind=kind, email=email, base=base, callback_url=callback_url,
                         user_id=user_id, update_to=update_to, request_type=request_type)


@task()
def two_factor_otp_mail(*, challenge_id):
    """Make, store and mail a two-factor code for a live challenge (authservice.two_factor.otp)."""
    from authservice.two_factor import otp  # noqa: PLC0415 - see above

    otp.deliver(challenge_id=challenge_id)
