"""GitLab (gitlab.com or self-hosted through ``issuer``): the profile is ``/api/v4/user``."""

from authservice.social.base import OAuth2Provider, Profile, ProviderError, _email


class GitLabProvider(OAuth2Provider):
    name = "GitLab"
    default_scopes = ("read_user",)

    def __init__(self, provider_id, config):
        base = (config.get("issuer") or "https://gitlab.com").rstrip("/")
        self.authorization_endpoint = f"{base}/oauth/authorize"
        self.token_endpoint = f"{base}/oauth/token"
        self.userinfo_endpoint = f"{base}/api/v4/user"
        # GitLab's ``issuer`` option is its base URL, not an OIDC issuer compared with ``iss``.
        super().__init__(provider_id, {k: v for k, v in config.items() if k != "issuer"})

    def map_profile(self, data):
        if data.get("id") in (None, ""):
            raise ProviderError("gitlab: profile has no id")
        return Profile(account_id=str(data["id"]), email=_email(data.get("email")),
                       email_verified=data.get("email_verified") is True,
                       name=data.get("name") or data.get("username") or "",
                       image=data.get("avatar_url"), raw=data)
