"""Domain verification: request a token, verify the TXT record (sso.md §7); the domain-list input."""

from rest_framework import serializers

from authservice.api import inputs
from authservice.api.registry import endpoint
from authservice.errors import APIError
from authservice.flows import sessions
from sso import domains, hostnames, providers


class DomainList(inputs.String):
    """A provider's ``domain``: one hostname or a comma-separated list of at most MAX_DOMAINS (I6).

    Checked where the list enters (register, update), so a bad or endless list is refused before
    discovery or metadata fetches run, and every later reader (the routing index, verify-domain)
    sees names that parse. Stored as sent, as better-auth does; the index holds the normalised names.
    """

    def __init__(self, **kwargs):
        kwargs.setdefault("min_length", 1)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        data = super().to_internal_value(data)
        try:
            hostnames.domain_list(data)
        except APIError as error:
            raise serializers.ValidationError(error.message) from None
        return data


class ProviderIdInput(inputs.Input):
    providerId = inputs.String()


@endpoint("POST", "/sso/request-domain-verification", name="request_domain_verification",
          body=ProviderIdInput, guard="session", summary="Issue or return the domain-verification token",
          response="DomainVerificationToken", tags=("sso",))
def request_domain_verification(ctx):
    domains.require_enabled()
    provider = providers.get_for(sessions.get_session(ctx).user, ctx.body["providerId"])
    token = domains.request_token(provider)
    ctx.status_code = 201
    return {"domainVerificationToken": token}


@endpoint("POST", "/sso/verify-domain", name="verify_domain", body=ProviderIdInput, guard="session",
          summary="Check the DNS TXT record and mark the domain verified", response="NoContent",
          tags=("sso",))
def verify_domain(ctx):
    domains.require_enabled()
    provider = providers.get_for(sessions.get_session(ctx).user, ctx.body["providerId"])
    domains.verify(provider)
    ctx.status_code = 204
    return None
