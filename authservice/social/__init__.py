"""Social sign-in providers (core.md §5.0): OAuth 2 base, generic OpenID Connect, built-ins, registry."""
