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


def saml_body(cert, provider_id="acme-saml", domain="acme.com", **config):
    return {
        "providerId": provider_id,
        "issuer": "http://127.0.0.1:8000/api/auth/sso/saml2/sp/metadata",
        "domain": domain,
        "samlConfig": {
            "entryPoint": "https://idp.acme.com/sso",
            "cert": cert,
            "idpMetadata": {"entityID": "https://idp.acme.com/entity"},
            "spMetadata": {"privateKey": "-----BEGIN PRIVATE KEY-----\nsecret\n-----END PRIVATE KEY-----"},
            "wantAssertionsSigned": True,
            **config,
        },
    }
