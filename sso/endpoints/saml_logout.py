"""SAML Single Logout routes (docs/saml-slo.md), at better-auth's paths.

- ``POST /sso/saml2/logout/{providerId}`` (SP-initiated, better-auth's ``initiateSLO``): called by the
  signed-in app with ``callbackURL``; keeps the Origin check, needs the session.
- ``GET``/``POST /sso/saml2/sp/slo/{providerId}`` (better-auth's ``sloEndpoint``): the IdP's
  LogoutRequest, or its LogoutResponse to ours, over HTTP-Redirect (GET, query) or HTTP-POST (form).
  The IdP's page posts it cross-site, so, as the ACS, it is exempt from the Origin check and needs no
  cookie (sso.md §10 rule 11); its integrity comes from the signed message (sso.saml.slo_inbound).
"""

from urllib.parse import urlencode

from authservice.api import inputs
from authservice.api.context import Redirect
from authservice.api.registry import endpoint
from sso.saml import slo, slo_outbound


class LogoutInput(inputs.Input):
    callbackURL = inputs.String(required=False)


class SloInput(inputs.Input):
    SAMLRequest = inputs.String(required=False)
    SAMLResponse = inputs.String(required=False)
    RelayState = inputs.String(required=False)
    SigAlg = inputs.String(required=False)
    Signature = inputs.String(required=False)


def _answer(result):
    """An Outgoing (redirect URL or POST form) or a plain redirect target."""
    if isinstance(result, str):
        return Redirect(result)
    if result.url is not None:
        return Redirect(result.url)
    return slo_outbound.form_response(result.form)


@endpoint("POST", "/sso/saml2/logout/:providerId", name="saml_logout", body=LogoutInput, body_optional=True,
          guard="session", no_store=True, redirects=True, response="Html", tags=("SSO",),
          summary="SP-initiated SAML Single Logout: end the session, send a signed LogoutRequest to the IdP")
def saml_logout(ctx):
    return _answer(slo.initiate(ctx, ctx.params["providerId"], ctx.body.get("callbackURL")))


def _raw_query(ctx):
    """The query string as received (an HTTP-Redirect signature covers its exact bytes); rebuilt from
    the parameters for an in-process call."""
    if ctx.request is not None:
        return ctx.request.META.get("QUERY_STRING", "")
    return urlencode({key: value for key, value in ctx.query.items() if value is not None})


def _slo_get(ctx):
    return _answer(slo.receive(ctx, ctx.params["providerId"], ctx.query, "redirect", _raw_query(ctx)))


def _slo_post(ctx):
    return _answer(slo.receive(ctx, ctx.params["providerId"], ctx.body, "post"))


_SLO = {"origin_check": False, "no_store": True, "redirects": True, "response": "Html", "tags": ("SSO",),
        "during_enrolment": True}

saml_slo_get = endpoint("GET", "/sso/saml2/sp/slo/:providerId", name="saml_slo_get", query=SloInput,
                        summary="SAML Single Logout service (HTTP-Redirect binding)", **_SLO)(_slo_get)
saml_slo_post = endpoint("POST", "/sso/saml2/sp/slo/:providerId", name="saml_slo_post", body=SloInput,
                         body_optional=True, form=True,
                         summary="SAML Single Logout service (HTTP-POST binding)", **_SLO)(_slo_post)
