"""Request bodies shared by the SSO tests."""


def oidc_body(idp_url, provider_id="acme", domain="acme.com", **changes):
    """A register body for an OIDC provider at ``idp_url``."""
    body = {
        "providerId": provider_id,
        "issuer": idp_url,
        "domain": domain,
        "oidcConfig": {"clientId": "client-123456", "clientSecret": "s3cr3t-value"},
    }
    for key, value in changes.items():
        if key == "oidc":
            body["oidcConfig"] = {**body["oidcConfig"], **value}
        elif value is None:
            body.pop(key, None)
        else:
            body[key] = value
    return body


def skip_discovery_body(provider_id="acme", domain="acme.com", issuer="https://idp.acme.com", **changes):
    oidc = {
        "skipDiscovery": True,
        "authorizationEndpoint": "https://idp.acme.com/authorize",
        "tokenEndpoint": "https://idp.acme.com/token",
        "jwksEndpoint": "https://idp.acme.com/jwks",
        **changes.pop("oidc", {}),
    }
    return oidc_body(issuer, provider_id=provider_id, domain=domain, oidc=oidc, **changes)
