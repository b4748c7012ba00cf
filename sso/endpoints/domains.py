"""Domain verification: request a token, verify the TXT record (sso.md §7); the domain-list input.

Several domains per provider (issue 14 §3): both endpoints take an optional ``domain`` naming one of
the provider's domains. Without it they act on every domain not yet verified, and answer as
better-auth does (its one ``domainVerificationToken``, 204, 502 naming the first failure); the
``domains`` list of the request's answer carries each domain's own token and TXT record name.
"""

from rest_framework import serializers

from authservice.api import inputs
from authservice.api.registry import endpoint
from authservice.errors import APIError
from authservice.flows import sessions
from sso import domains, hostnames, providers


class DomainList(inputs._Strict):  # noqa: SLF001 - the shared strict base
    """A provider's ``domain``: a comma-separated string (better-auth's form) or a list of hostnames,
    at most MAX_DOMAINS (I6). Returned as the comma-separated string better-auth stores.

    Checked where the list enters (register, update), so a bad or endless list is refused before
    discovery or metadata fetches run, and every later reader (the domain rows, verify-domain) sees
    names that parse. A string is stored as sent, as better-auth does; the rows hold the normalised names.
    """

    expected = "string"
    openapi_schema = {"oneOf": [
        {"type": "string", "description": "One hostname or a comma-separated list"},
        {"type": "array", "items": {"type": "string"}, "maxItems": hostnames.MAX_DOMAINS},
    ]}

    def to_internal_value(self, data):
        if isinstance(data, list):
            # Bounded before any item is looked at; a comma inside an item would split it later.
            if len(data) > hostnames.MAX_DOMAINS:
                raise serializers.ValidationError(f"A provider may list at most {hostnames.MAX_DOMAINS} domains")
            if not all(isinstance(item, str) and "," not in item and "\x00" not in item for item in data):
                raise serializers.ValidationError("Invalid domain")
            data = ",".join(item.strip() for item in data)
        elif not isinstance(data, str) or "\x00" in data:
            self.wrong_type(data)
        if not data.strip():
            raise serializers.ValidationError("Invalid domain")
        try:
            hostnames.domain_list(data)
        except APIError as error:
            raise serializers.ValidationError(error.message) from None
        return data


class DomainInput(inputs.Input):
    providerId = inputs.String()
    # One of the provider's domains; omitted = every domain not yet verified (better-auth's call).
    domain = inputs.String(required=False, max_length=hostnames.MAX_ENTRY)


@endpoint("POST", "/sso/request-domain-verification", name="request_domain_verification",
          body=DomainInput, guard="session", summary="Issue or return the domain-verification tokens",
          response="DomainVerificationToken", tags=("sso",))
def request_domain_verification(ctx):
    domains.require_enabled()
    provider = providers.get_for(sessions.get_session(ctx).user, ctx.body["providerId"])
    token, rows = domains.request_token(provider, ctx.body.get("domain"))
    ctx.status_code = 201
    answer = {"domainVerificationToken": token}
    # A one-domain provider asked better-auth's way gets better-auth's answer exactly.
    if ctx.body.get("domain") is not None or len(domains.rows(provider)) > 1:
        answer["domains"] = [domains.describe(provider, row) for row in rows]
    return answer


@endpoint("POST", "/sso/verify-domain", name="verify_domain", body=DomainInput, guard="session",
          summary="Check the DNS TXT records and mark the domains verified", response="NoContent",
          tags=("sso",))
def verify_domain(ctx):
    domains.require_enabled()
    provider = providers.get_for(sessions.get_session(ctx).user, ctx.body["providerId"])
    domains.verify(provider, ctx.body.get("domain"))
    ctx.status_code = 204
    return None
