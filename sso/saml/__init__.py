"""SAML 2.0 service provider for the SSO plugin, on pysaml2 (sso.md §5, §9, §10).

- ``config``: a pysaml2 SPConfig per provider, from the database row.
- ``sign_in``: SP-initiated AuthnRequest (HTTP-Redirect).
- ``acs``: ``consume(ctx, provider_id, saml_response, relay_state)``, the Assertion Consumer Service.
- ``metadata``: SP metadata XML. ``validation``: samlConfig checks at register/update.
"""
