"""Mails, rendered from overridable templates and sent through Django's mail backends [D15].

For a mail ``kind`` the templates are ``authservice/email/<kind>_subject.txt``,
``authservice/email/<kind>.txt`` and, if present, ``authservice/email/<kind>.html``. Override them
in any template directory. Text parts render with autoescaping off, so links arrive intact.

Verification, change-of-address and reset mails are never sent inside the request: the flows enqueue a
task (authservice.tasks), which decides whether anyone gets mail and calls the adapter, which calls
this module (I7).
"""

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template import Context, TemplateDoesNotExist
from django.template.loader import get_template, render_to_string

KINDS = ("verify-email", "change-email-verification", "change-email-confirmation", "reset-password",
         "delete-account")


def _render_text(name, context):
    template = get_template(name)
    engine_template = getattr(template, "template", None)
    if engine_template is None:  # a non-Django engine: render as it knows
        return template.render(context)
    return engine_template.render(Context(context, autoescape=False))


def render(kind, context):
    subject = " ".join(_render_text(f"authservice/email/{kind}_subject.txt", context).split())
    text = _render_text(f"authservice/email/{kind}.txt", context)
    try:
        html = render_to_string(f"authservice/email/{kind}.html", context)
    except TemplateDoesNotExist:
        html = None
    return subject, text, html


def send(kind, to, context):
    subject, text, html = render(kind, context)
    message = EmailMultiAlternatives(subject, text, settings.DEFAULT_FROM_EMAIL, [to])
    if html:
        message.attach_alternative(html, "text/html")
    message.send()
