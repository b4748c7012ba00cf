"""GitHub (plain OAuth 2): the profile comes from ``/user`` and the e-mail from ``/user/emails``."""

from authservice.social.base import OAuth2Provider, Profile, ProviderError, _email


class GitHubProvider(OAuth2Provider):
    name = "GitHub"
    authorization_endpoint = "https://github.com/login/oauth/authorize"
    token_endpoint = "https://github.com/login/oauth/access_token"
    userinfo_endpoint = "https://api.github.com/user"
    emails_endpoint = "https://api.github.com/user/emails"
    default_scopes = ("read:user", "user:email")

    def __init__(self, provider_id, config):
        super().__init__(provider_id, config)
        self.emails_endpoint = self.config.get("emailsEndpoint") or self.emails_endpoint

    def fetch_profile(self, tokens, nonce=None, user_data=None):
        auth = {"Authorization": f"Bearer {tokens.access_token}"}
        profile = self.request_json("GET", self.userinfo_endpoint, headers=auth)
        if not isinstance(profile, dict) or profile.get("id") in (None, ""):
            raise ProviderError("github: /user has no id")
        try:
            emails = self.request_json("GET", self.emails_endpoint, headers=auth)
        except ProviderError:
            emails = []  # the user:email scope was not granted; the public e-mail may still do
        emails = [e for e in emails if isinstance(e, dict)] if isinstance(emails, list) else []
        email = profile.get("email")
        if not email and emails:
            email = next((e.get("email") for e in emails if e.get("primary")), emails[0].get("email"))
        verified = any(e.get("email") == email and e.get("verified") is True for e in emails)
        return Profile(account_id=str(profile["id"]), email=_email(email), email_verified=verified,
                       name=profile.get("name") or profile.get("login") or "",
                       image=profile.get("avatar_url"), raw=profile)
