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

from tests.security.saml_slo_support import (  # noqa: F401 - fixtures
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
