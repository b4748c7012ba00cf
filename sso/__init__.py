"""Enterprise SSO (OIDC, later SAML) and organizations, wire-compatible with ``@better-auth/sso``.

Add ``"sso"`` to INSTALLED_APPS after ``"authservice"``; its endpoints join the core registry under the
same base path. Settings live in ``settings.AUTHSERVICE_SSO`` (see ``sso/app_settings.py``).
"""
