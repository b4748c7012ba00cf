"""Mails, rendered from overridable templates and sent through Django's mail backends [D15].

For a mail ``kind`` the templates are ``authservice/email/<kind>_subject.txt``,
``authservice/email/<kind>.txt`` and, if present, ``authservice/email/<kind>.html``. Override them
in any template directory. Text parts render with autoescaping off, so links arrive intact.

Override ``.txt`` and ``.html`` together. A mail's HTML part is sent only when it is at least as much
the project's as its text: when a project overrides ``<kind>.txt`` but not ``<kind>.html``, the mail is
text only, because our default HTML would say something other than the project's text. An overridden
``.html`` with our default ``.txt`` is sent as both (the default text is a faithful fallback).

Verification, change-of-address and reset mails are never sent inside the request: the flows enqueue a
task (authservice.tasks), which decides whether anyone gets mail and calls the adapter, which calls
this module (I7).
"""

from pathlib import Path

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template import Context, TemplateDoesNotExist
from django.template.loader import get_template

KINDS = ("verify-email", "change-email-verification", "change-email-confirmation", "reset-password",
         "delete-account", "two-factor-otp")
_DEFAULTS = Path(__file__).resolve().parent / "templates"


def _is_default(template):
    """True when ``template`` is the one this app ships (not a project's override)."""
    name = getattr(getattr(template, "origin", None), "name", None)
    return bool(name) and Path(name).resolve().is_relative_to(_DEFAULTS)


def _render_text(template, context):
    engine_template = getattr(template, "template", None)
    if engine_template is None:  # a non-Django engine: render as it knows
        return template.render(context)
    return engine_template.render(Context(context, autoescape=False))


def render(kind, context):
    subject = " ".join(_render_text(get_template(f"authservice/email/{kind}_subject.txt"), context).split())
    text_template = get_template(f"authservice/email/{kind}.txt")
    text = _render_text(text_template, context)
    try:
        html_template = get_template(f"authservice/email/{kind}.html")
    except TemplateDoesNotExist:
        return subject, text, None
    if _is_default(html_template) and not _is_default(text_template):
        return subject, text, None  # the project rewrote the text only: our HTML would contradict it
    return subject, text, html_template.render(context)


def send(kind, to, context):
    subject, text, html = render(kind, context)
    message = EmailMultiAlternatives(subject, text, settings.DEFAULT_FROM_EMAIL, [to])
    if html:
        message.attach_alternative(html, "text/html")
    message.send()
