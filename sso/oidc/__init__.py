"""OpenID Connect sign-in for SSO providers: authorization URL, code exchange, ID token verification."""
