"""Mails as clients and people receive them (core.md §7.1, [D15]).

Every mail has a text/plain part whose first URL under ``{base}`` is the link, absolute, on one line,
with ``&`` (not ``&amp;``); it also carries the bare token. Subjects keep the kinds apart.
"""

import email
import email.policy
import re
from pathlib import Path

import environ
import pytest
from django.core import mail
from django.core.mail import EmailMultiAlternatives

from authservice import mail as authmail
from authservice.flows.verification import make_token
from project import mailers
from tests.conftest import BASE, ORIGIN

pytestmark = pytest.mark.django_db

URL = re.compile(r"https?://[^\s<>\"]+")
BASE_URL = ORIGIN + BASE
VERIFY_LINK = re.compile(rf"^{re.escape(BASE_URL)}/verify-email\?token=([^&\s]+)&callbackURL=%2Fwelcome$")
RESET_LINK = re.compile(
    rf"^{re.escape(BASE_URL)}/reset-password/([A-Za-z0-9]{{24}})\?callbackURL=%2Fwelcome$")


def first_link(text):
    return next(url for url in URL.findall(text) if url.startswith(BASE_URL))


def send_verify_email(api, user):
    api.api_post("/send-verification-email", {"email": user.email, "callbackURL": "/welcome"})


def send_change_email_verification(api, user):
    token = make_token(email=user.email, update_to="new@example.com",
                       request_type="change-email-confirmation")
    api.api_get("/verify-email", {"token": token, "callbackURL": "/welcome"})


def send_reset_password(api, user):
    api.api_post("/request-password-reset", {"email": user.email, "redirectTo": "/welcome"})


SENDERS = {
    "verify-email": (send_verify_email, VERIFY_LINK),
    "change-email-verification": (send_change_email_verification, VERIFY_LINK),
    "reset-password": (send_reset_password, RESET_LINK),
}


@pytest.fixture(params=sorted(SENDERS))
def sent(request, api, user):
    """(kind, the one mail sent, the expected link pattern) for each mail this service sends."""
    send, pattern = SENDERS[request.param]
    send(api, user)
    assert len(mail.outbox) == 1
    return request.param, mail.outbox[0], pattern


def test_every_mail_has_a_text_part(sent):
    _, message, _ = sent
    assert message.content_subtype == "plain"
    assert message.body.strip()


def test_the_first_url_under_base_is_the_link(sent):
    _, message, pattern = sent
    assert pattern.match(first_link(message.body)), message.body


def test_the_link_is_on_one_unbroken_line(sent):
    _, message, pattern = sent
    lines = [line for line in message.body.splitlines() if line.strip().startswith(BASE_URL)]
    assert lines
    assert pattern.match(lines[0].strip())


def test_the_text_part_is_not_html_escaped(sent):
    _, message, _ = sent
    assert "&amp;" not in message.body
    assert "&callbackURL=" in message.body or "?callbackURL=" in message.body


def test_the_mail_carries_the_bare_token(sent):
    _, message, pattern = sent
    token = pattern.match(first_link(message.body)).group(1)
    assert message.body.count(token) >= 2


def test_the_html_part_links_to_the_same_url(sent):
    _, message, _ = sent
    assert isinstance(message, EmailMultiAlternatives)
    html = next(content for content, mimetype in message.alternatives if mimetype == "text/html")
    assert f'href="{first_link(message.body).replace("&", "&amp;")}"' in html


@pytest.mark.parametrize("kind, subject", [
    ("verify-email", "Verify your email address"),
    ("change-email-verification", "Confirm your new email address"),
    ("change-email-confirmation", "Approve a request on your account"),
    ("reset-password", "Reset your password"),
    ("delete-account", "Confirm the deletion of your account"),
])
def test_default_subjects(kind, subject):
    rendered, _, _ = authmail.render(kind, {"url": f"{BASE_URL}/x?a=1&b=2", "token": "t",
                                            "email": "a@example.com", "new_email": "b@example.com"})
    assert rendered == subject


def test_only_the_change_email_verification_subject_speaks_of_a_new_address():
    context = {"url": f"{BASE_URL}/x", "token": "t", "email": "a@example.com", "new_email": "b@example.com"}
    speaking = [kind for kind in authmail.KINDS
                if re.search(r"\b(new|chang)", authmail.render(kind, context)[0], re.IGNORECASE)]
    assert speaking == ["change-email-verification"]


def test_the_verification_subject_is_sent(api, user):
    send_verify_email(api, user)
    assert mail.outbox[0].subject == "Verify your email address"


def test_filemail_email_url_writes_mails_to_that_directory(api, user, settings, tmp_path):
    outbox = tmp_path / "mails"
    config = environ.Env.email_url_config(f"filemail:///{outbox}")
    assert config["EMAIL_BACKEND"] == "django.core.mail.backends.filebased.EmailBackend"
    assert config["EMAIL_FILE_PATH"] == str(outbox)
    for key, value in mailers.mail_settings(config).items():
        setattr(settings, key, value)
    send_reset_password(api, user)
    files = list(Path(outbox).iterdir())
    assert len(files) == 1
    # Read as a mail client does: Django 6 writes long text lines quoted-printable (soft line breaks).
    written = email.message_from_string(files[0].read_text(), policy=email.policy.default)
    assert written["Subject"] == "Reset your password"
    assert RESET_LINK.match(first_link(written.get_body(("plain",)).get_content()))


def test_the_filemail_url_form_with_four_slashes_is_an_absolute_path():
    config = environ.Env.email_url_config("filemail:////var/spool/authservice-mail")
    assert config["EMAIL_FILE_PATH"] == "/var/spool/authservice-mail"


def test_an_smtp_email_url_becomes_a_mailer_with_the_smtp_backends_options():
    config = environ.Env.email_url_config("smtp+tls://user:secret@smtp.example.com:587")
    assert mailers.mailer(config) == {
        "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "OPTIONS": {"host": "smtp.example.com", "port": 587, "username": "user", "password": "secret",
                    "use_tls": True},
    }


def test_a_console_email_url_becomes_a_mailer_without_options():
    config = environ.Env.email_url_config("consolemail://")
    assert mailers.mailer(config) == {"BACKEND": "django.core.mail.backends.console.EmailBackend", "OPTIONS": {}}


def test_the_example_project_configures_mailers_exactly_on_django_6_1_and_later():
    import django

    assert ("MAILERS" in mailers.mail_settings(environ.Env.email_url_config("consolemail://"))) == \
        (django.VERSION >= (6, 1))


def test_the_system_check_warns_when_mail_runs_inside_the_request_in_production(settings):
    from authservice.checks import check_settings

    settings.DEBUG = False
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    assert "authservice.W004" in {problem.id for problem in check_settings(None)}
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    assert "authservice.W004" not in {problem.id for problem in check_settings(None)}


# --- overriding the templates: .txt and .html together --------------------------------------------
@pytest.fixture
def override(settings, tmp_path):
    """``override("verify-email.txt", text)``: a project template in a directory searched first."""
    settings.TEMPLATES = [{**settings.TEMPLATES[0], "DIRS": [tmp_path, *settings.TEMPLATES[0]["DIRS"]]}]
    folder = tmp_path / "authservice" / "email"
    folder.mkdir(parents=True)

    def write(name, text):
        (folder / name).write_text(text)

    return write


def html_parts(message):
    return [content for content, mimetype in getattr(message, "alternatives", []) if mimetype == "text/html"]


def test_a_project_that_overrides_only_the_text_sends_text_only(api, user, override):
    override("verify-email.txt", "Welcome to Acme. Confirm: {{ url }}\n")
    send_verify_email(api, user)
    message = mail.outbox[0]
    assert message.body.startswith("Welcome to Acme. Confirm: ")
    assert html_parts(message) == []


def test_a_project_that_overrides_both_sends_both(api, user, override):
    override("verify-email.txt", "Welcome to Acme. Confirm: {{ url }}\n")
    override("verify-email.html", '<p>Welcome to Acme. <a href="{{ url }}">Confirm</a></p>')
    send_verify_email(api, user)
    [html] = html_parts(mail.outbox[0])
    assert html.startswith("<p>Welcome to Acme.")


def test_a_project_that_overrides_only_the_html_keeps_the_default_text(api, user, override):
    override("verify-email.html", '<p>Acme: <a href="{{ url }}">confirm</a></p>')
    send_verify_email(api, user)
    message = mail.outbox[0]
    assert VERIFY_LINK.match(first_link(message.body))
    assert html_parts(message)[0].startswith("<p>Acme:")


def test_without_overrides_the_default_html_is_sent(api, user):
    send_verify_email(api, user)
    assert len(html_parts(mail.outbox[0])) == 1
