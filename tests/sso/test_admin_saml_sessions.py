"""The admin shows what SAML Single Logout keeps of each session (docs/saml-slo.md), read-only."""

from datetime import timedelta

import pytest
from django.utils import timezone

from authservice.models import Session
from sso.models import SamlSession, SsoProvider

pytestmark = pytest.mark.django_db


@pytest.fixture
def saml_session(make_user):
    user = make_user(email="ada@corp.com")
    provider = SsoProvider.objects.create(provider_id="corp-saml", issuer="https://sp.example.com/corp",
                                          domain="corp.com", user=user, saml_config={"entryPoint": "x"})
    session = Session.objects.create(token="t" * 32, user=user, expires_at=timezone.now() + timedelta(days=1))
    return SamlSession.objects.create(session=session, provider=provider, name_id="ada-name-id" + "x" * 200,
                                      session_index="_index-1")


def test_the_list_shows_provider_a_name_id_prefix_and_session_index(admin_client, saml_session):
    response = admin_client.get("/admin/sso/samlsession/")
    text = response.content.decode()
    assert response.status_code == 200
    assert "corp-saml" in text and "_index-1" in text
    assert "ada-name-id" in text and saml_session.name_id not in text


def test_the_page_shows_the_whole_name_id_but_not_the_session_token(admin_client, saml_session):
    response = admin_client.get(f"/admin/sso/samlsession/{saml_session.pk}/change/")
    text = response.content.decode()
    assert response.status_code == 200
    assert saml_session.name_id in text and "t" * 32 not in text


def test_a_saml_session_cannot_be_changed_or_deleted_here(admin_client, saml_session):
    change = admin_client.post(f"/admin/sso/samlsession/{saml_session.pk}/change/", {"session_index": "other"})
    delete = admin_client.post(f"/admin/sso/samlsession/{saml_session.pk}/delete/", {"post": "yes"})
    assert (change.status_code, delete.status_code) == (403, 403)
    assert SamlSession.objects.get().session_index == "_index-1"
