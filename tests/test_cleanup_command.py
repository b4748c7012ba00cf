"""``manage.py authservice_cleanup``: expired rows of every kind go, live ones stay, in batches."""

import threading
import time
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.db.models import signals
from django.utils import timezone

from authservice.management.commands.authservice_cleanup import delete_expired
from authservice.models import Session, Verification
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db


def _row(identifier, expires_in):
    return Verification.objects.create(identifier=identifier, value="x",
                                       expires_at=timezone.now() + timedelta(seconds=expires_in))


def test_expired_passkey_challenges_asked_for_and_never_finished_are_deleted():
    for _ in range(3):
        assert ApiClient().api_get("/passkey/generate-authenticate-options").status_code == 200
    Verification.objects.filter(identifier__startswith="passkey-challenge:").update(
        expires_at=timezone.now() - timedelta(seconds=1))
    call_command("authservice_cleanup", stdout=StringIO())
    assert not Verification.objects.filter(identifier__startswith="passkey-challenge:").exists()


def test_expired_verification_rows_of_every_kind_are_deleted_and_live_ones_kept():
    for kind in ("reset-password:a", "delete-account-b", "passkey-challenge:c", "sso-state:d", "anything"):
        _row(kind, -60)
    live = _row("reset-password:live", 600)
    out = StringIO()
    call_command("authservice_cleanup", stdout=out)
    assert list(Verification.objects.all()) == [live]
    assert "Verification: 5 expired rows deleted" in out.getvalue()


def test_a_backlog_is_deleted_in_batches_until_none_is_left():
    for index in range(7):
        _row(f"passkey-challenge:{index}", -60)
    assert delete_expired(Verification, "expires_at", timezone.now(), batch=3) == 7
    assert not Verification.objects.exists()


def _session(user, expires_in):
    from tests.test_cookies import make_session

    return make_session(user, age=10, expires_in=expires_in)


def test_expired_sessions_go_with_the_rows_that_cascade_from_them_and_live_ones_stay(user):
    from sso.models import Organization, SessionOrganization

    expired, live = _session(user, 5), _session(user, 3600)
    organization = Organization.objects.create(name="Corp", slug="corp")
    for session in (expired, live):
        SessionOrganization.objects.create(session=session, active_organization=organization)
    assert delete_expired(Session, "expires_at", timezone.now()) == 1
    assert list(Session.objects.all()) == [live]
    assert list(SessionOrganization.objects.values_list("session_id", flat=True)) == [live.pk]


def test_a_receiver_of_the_delete_signals_still_sees_every_expired_session(user):
    # With a receiver the rows are deleted by Django's QuerySet.delete(), which sends the signals.
    expired = {_session(user, 5).pk for _ in range(3)}
    seen = []

    def receiver(sender, instance, **kwargs):
        seen.append(instance.pk)

    signals.post_delete.connect(receiver, sender=Session)
    try:
        assert delete_expired(Session, "expires_at", timezone.now(), batch=2) == 3
    finally:
        signals.post_delete.disconnect(receiver, sender=Session)
    assert set(seen) == expired


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks: PostgreSQL's SKIP LOCKED")
def test_a_cleanup_skips_the_rows_another_cleanup_holds_instead_of_waiting_for_them(user):
    # Two cron jobs overlapping: the second takes the rows the first has not locked, and waits on none.
    held, rest = {_session(user, 5).pk for _ in range(2)}, {_session(user, 5).pk for _ in range(3)}
    locked, release = threading.Event(), threading.Event()

    def first_cleanup():
        with transaction.atomic():
            list(Session.objects.filter(pk__in=held).select_for_update())
            locked.set()
            release.wait(10)
        connection.close()

    holder = threading.Thread(target=first_cleanup)
    holder.start()
    try:
        assert locked.wait(10)
        started = time.monotonic()
        assert delete_expired(Session, "expires_at", timezone.now()) == len(rest)
        assert time.monotonic() - started < 5
    finally:
        release.set()
        holder.join()
    assert set(Session.objects.values_list("pk", flat=True)) == held
