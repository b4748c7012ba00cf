"""I7: whether an account exists is not revealed by an endpoint that mails, not even by its time.

The attack (F7): with real SMTP, ``forget-password`` took 52 ms for a registered address and 4 ms for
an unknown one, because the mail was sent inside the request and only to existing targets;
``change-email`` showed the reverse for the new address. The mechanism that keeps I7 is a task queue:
for a known and for an unknown address the request enqueues the same task and sends nothing, and the
worker alone decides who gets mail. These tests prove that mechanism with the database task backend;
``bench/enumeration.py`` measures the time against a loopback SMTP server.

For each endpoint, "known" is the address whose existence the attacker probes and "unknown" one that
has no account: sign-up with a taken address (no-session answers, as with required verification),
forget-password and request-password-reset, send-verification-email without a session, and
change-email to another user's address.
"""

import re
from dataclasses import dataclass, field

import pytest
from django.core import mail
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.conftest import PASSWORD, ApiClient

pytestmark = pytest.mark.django_db

ADA = "ada@example.com"
GRACE = "grace@example.com"
NOBODY = "nobody@example.com"
DATABASE_QUEUE = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}


@dataclass(frozen=True)
class Probe:
    path: str
    field: str
    known: str
    # Who holds the mail once the worker has run: the account holder, never the prober's other guess.
    mailed: str
    body: dict = field(default_factory=dict)
    signed_in: bool = False
    settings: dict = field(default_factory=dict)


PROBES = {
    "sign-up": Probe("/sign-up/email", "email", ADA, mailed=NOBODY,
                     body={"name": "Ada", "password": PASSWORD},
                     settings={"email_and_password": {"require_email_verification": True}}),
    "forget-password": Probe("/forget-password", "email", ADA, mailed=ADA),
    "request-password-reset": Probe("/request-password-reset", "email", ADA, mailed=ADA),
    "send-verification-email": Probe("/send-verification-email", "email", ADA, mailed=ADA),
    "change-email": Probe("/change-email", "newEmail", GRACE, mailed=NOBODY, signed_in=True),
}


@pytest.fixture
def database_queue(settings):
    settings.TASKS = DATABASE_QUEUE


@pytest.fixture(params=sorted(PROBES))
def probe(request, make_user, configure, database_queue):
    """(probe, client) with Ada (unverified) and Grace registered and the database queue on."""
    ada = make_user(email=ADA)
    make_user(email=GRACE, name="Grace")
    probe = PROBES[request.param]
    client = ApiClient()
    if probe.signed_in:
        response = client.api_post("/sign-in/email", {"email": ada.email, "password": PASSWORD})
        assert response.status_code == 200
    configure(**probe.settings)
    return probe, client


def ask(probe, client, address):
    return client.api_post(probe.path, {**probe.body, probe.field: address})


def ask_both(probe, client):
    return ask(probe, client, probe.known), ask(probe, client, NOBODY)


def queued_task_paths():
    from django_tasks_db.models import DBTaskResult  # noqa: PLC0415 - the app of the database queue

    return list(DBTaskResult.objects.order_by("enqueued_at").values_list("task_path", flat=True))


def statement_shapes(queries):
    """Each statement as its verb and tables, without values: what the request did, not with what."""
    return [(q["sql"].split()[0].upper(), tuple(re.findall(r'(?:FROM|INTO|UPDATE|JOIN) "?(\w+)"?', q["sql"])))
            for q in queries]


def test_the_request_sends_no_mail(probe):
    ask_both(*probe)
    assert mail.outbox == []


def test_known_and_unknown_addresses_cost_the_request_the_same_work(probe):
    """The same mails sent (none), the same tasks enqueued and, but for sign-up, the same SQL."""
    probe, client = probe
    with CaptureQueriesContext(connection) as known:
        ask(probe, client, probe.known)
    known_mails = len(mail.outbox)
    known_tasks = queued_task_paths()
    with CaptureQueriesContext(connection) as unknown:
        ask(probe, client, NOBODY)
    assert len(mail.outbox) - known_mails == known_mails
    unknown_tasks = queued_task_paths()[len(known_tasks):]
    assert known_tasks and known_tasks == unknown_tasks
    if probe.path != "/sign-up/email":  # sign-up creates the account for a free address: its purpose
        assert statement_shapes(known.captured_queries) == statement_shapes(unknown.captured_queries)


@pytest.mark.django_db(transaction=True)
def test_the_queued_mail_waits_for_the_worker_which_mails_only_the_account_holder(probe):
    ask_both(*probe)
    assert mail.outbox == []
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", verbosity=0)
    assert [message.to for message in mail.outbox] == [[probe[0].mailed]]
