"""SAML Single Logout, attack pass 14: an incoming logout message's times must be refused cleanly (I4, I6).

``sso.saml.slo_inbound._check_times`` adds the clock skew to a LogoutRequest's ``NotOnOrAfter`` before
comparing it with now. A NotOnOrAfter in the last moments of year 9999 makes that addition overflow
(``OverflowError: date value out of range``): an unhandled exception, a 500, on an anonymous endpoint.

Anyone can register a provider and run its IdP (security.md, the attacker), so the attacker signs such a
LogoutRequest with their own IdP key and posts it to their own provider's SLO URL: every check before the
times passes. The fix belongs at the mechanism: compare without arithmetic that can leave the datetime
range (``not_on_or_after <= now - skew``), or bound parsed instants to a sane window and treat anything
outside as "not a valid instant" (a 400 INVALID_LOGOUT_REQUEST).
"""

import datetime
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from tests.conftest import BASE, ORIGIN, ApiClient
from tests.security.saml_slo_support import (  # noqa: F401 - fixtures
    FORM,
    Message,
    configure_sso,
    evil,
    idp_entity,
    post_form,
    post_slo,
    redirect_query,
    get_slo,
    slo_keys,
    slo_on,
    slo_url,
)
from tests.security.test_subject_mapping_lock import IDP_ENTITY, SP_ENTITY, _provider, key  # noqa: F401 - fixture
from tests.sso.conftest import _sso_defaults  # noqa: F401 - fixture
from tests.sso.saml import idp_signer
from tests.sso.saml.idp_signer import Claims

END_OF_TIME = datetime.datetime(9999, 12, 31, 23, 59, 59, tzinfo=datetime.UTC)


def test_a_not_on_or_after_at_the_end_of_time_is_a_clean_400_not_a_500(evil, slo_keys, tmp_path):
    """I4/I6 (a parse or range error is a 400, never a 500): NotOnOrAfter=9999-12-31T23:59:59Z plus the
    clock skew overflows in _check_times. Signed by the attacker's own IdP for their own provider, so the
    signature, Issuer and Destination checks all pass first."""
    message = Message(issuer=idp_entity("evil"), destination=slo_url("evil"), not_on_or_after=END_OF_TIME)
    response = post_slo("evil", post_form(message, slo_keys["other"], tmp_path))
    assert response.status_code != 500, response.content
    # A message valid "forever" is acceptable (it is still single-use); what is not is the crash.
    assert response.status_code in (200, 400), response.content


def test_a_not_on_or_after_at_the_end_of_time_over_http_redirect_is_not_a_500(evil, slo_keys):
    """Same overflow through the HTTP-Redirect binding (query signature by the attacker's IdP key)."""
    message = Message(issuer=idp_entity("evil"), destination=slo_url("evil"), not_on_or_after=END_OF_TIME)
    response = get_slo("evil", redirect_query(message, slo_keys["other"]))
    assert response.status_code != 500, response.content
    assert response.status_code in (302, 400), response.content


# --- the ACS reads instants with the same code (sso.saml.instants) --------------------------------------
@pytest.mark.django_db
def test_an_assertion_valid_until_the_end_of_time_signs_in_and_stays_single_use(make_user, key, tmp_path,
                                                                                  configure_sso):
    """I4/I9: the replay store kept an assertion's ID until NotOnOrAfter + skew, which overflowed for
    9999-12-31T23:59:59Z (a 500 after the signature passed). The deadline saturates instead; a replay
    of the same response is still refused."""
    configure_sso(saml={"enable_single_logout": True})
    _provider(make_user(email="owner@acme.test", email_verified=True), key)
    first, replay = _signed_response_twice(key, tmp_path, END_OF_TIME)
    assert first.status_code == 302 and "error" not in first["Location"], (first.status_code, first.content)
    assert replay.status_code == 302 and "error" in replay["Location"], replay.content


def _signed_response_twice(key, tmp_path, not_on_or_after):  # noqa: F811 - the key fixture's value
    """One signed response (NotOnOrAfter as given) to a fresh AuthnRequest, posted, then posted again."""
    browser = ApiClient()
    started = browser.api_post("/sign-in/sso", {"providerId": "acme", "callbackURL": "/dashboard"})
    query = parse_qs(urlsplit(started.json()["url"]).query)
    claims = Claims(issuer=IDP_ENTITY, destination=f"{ORIGIN}{BASE}/sso/saml2/callback/acme", audience=SP_ENTITY,
                    in_response_to=idp_signer.request_id(query["SAMLRequest"][0]), name_id="eve@acme.test",
                    attributes={"email": "eve@acme.test"}, not_on_or_after=not_on_or_after)
    signed = idp_signer.sign(idp_signer.response_xml(claims), key, claims.response_id, tmp_path)
    body = urlencode({"SAMLResponse": idp_signer.encode(signed), "RelayState": query["RelayState"][0]})
    return [browser.post(f"{BASE}/sso/saml2/callback/acme", body, content_type=FORM) for _ in range(2)]
