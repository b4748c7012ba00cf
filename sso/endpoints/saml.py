"""SAML service provider routes (sso.md §5, §11): SP metadata and the ACS (seed path + better-auth alias).

The ACS is posted cross-site by the IdP, so it is the one state-changing SSO route without the
Origin check (sso.md §10 rule 11); its integrity comes from the signed SAMLResponse instead.
"""

from authservice.api import inputs
from authservice.api.context import Redirect
from authservice.api.registry import endpoint
from authservice.api.render import xml as xml_response
from authservice.flows import sessions
from sso.saml import acs, checks, metadata, redirects  # noqa: F401 - checks registers sso.E010


class MetadataQuery(inputs.Input):
    providerId = inputs.String()
    format = inputs.String(required=False)


@endpoint("GET", "/sso/saml2/sp/metadata", name="sp_metadata", query=MetadataQuery,
          summary="SAML SP metadata of a provider", response="Xml", tags=("SSO",))
def sp_metadata(ctx):
    return xml_response(metadata.for_provider(ctx, ctx.query["providerId"]))


class AcsInput(inputs.Input):
    SAMLResponse = inputs.String()
    RelayState = inputs.String(required=False)


class AcsQuery(inputs.Input):
    RelayState = inputs.String(required=False)


def _post(ctx):
    return Redirect(acs.consume(ctx, ctx.params["providerId"], ctx.body["SAMLResponse"],
                                ctx.body.get("RelayState")))


def _get(ctx):
    signed_in = sessions.get_session(ctx) is not None
    return Redirect(redirects.idp_initiated_get(ctx, ctx.query.get("RelayState"), signed_in))


_ACS = {"body": AcsInput, "form": True, "origin_check": False, "no_store": True, "redirects": True,
        "response": "Redirect", "tags": ("SSO",)}
# It only asks whether a session exists, to pick the redirect: a session still enrolling may ask.
_ACS_GET = {"query": AcsQuery, "no_store": True, "redirects": True, "response": "Redirect", "tags": ("SSO",),
            "during_enrolment": True}

saml_acs = endpoint("POST", "/sso/saml2/callback/:providerId", name="saml_acs",
                    summary="SAML Assertion Consumer Service (HTTP-POST)", **_ACS)(_post)
saml_acs_alias = endpoint("POST", "/sso/saml2/sp/acs/:providerId", name="saml_acs_alias",
                          summary="SAML ACS at better-auth's path", **_ACS)(_post)
saml_acs_get = endpoint("GET", "/sso/saml2/callback/:providerId", name="saml_acs_get",
                        summary="IdP-initiated redirect to the ACS", **_ACS_GET)(_get)
saml_acs_alias_get = endpoint("GET", "/sso/saml2/sp/acs/:providerId", name="saml_acs_alias_get",
                              summary="IdP-initiated redirect at better-auth's ACS path", **_ACS_GET)(_get)
