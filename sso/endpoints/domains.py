"""Domain verification: request a token, verify the TXT record (sso.md §7)."""

from authservice.api import inputs
from authservice.api.registry import endpoint
from authservice.flows import sessions
from sso import domains, providers


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
