"""Discord (plain OAuth 2): the profile is ``/users/@me``."""

from authservice.social.base import OAuth2Provider, Profile, ProviderError, _email


class DiscordProvider(OAuth2Provider):
    name = "Discord"
    authorization_endpoint = "https://discord.com/api/oauth2/authorize"
    token_endpoint = "https://discord.com/api/oauth2/token"
    userinfo_endpoint = "https://discord.com/api/users/@me"
    default_scopes = ("identify", "email")

    def map_profile(self, data):
        if not data.get("id"):
            raise ProviderError("discord: profile has no id")
        user_id = str(data["id"])
        if data.get("avatar"):
            extension = "gif" if str(data["avatar"]).startswith("a_") else "png"
            image = f"https://cdn.discordapp.com/avatars/{user_id}/{data['avatar']}.{extension}"
        else:
            # Discord's default avatars: by the user id for new-style names, else the discriminator.
            discriminator = str(data.get("discriminator") or "0")
            index = (int(user_id) >> 22) % 6 if discriminator == "0" and user_id.isdigit() \
                else int(discriminator) % 5 if discriminator.isdigit() else 0
            image = f"https://cdn.discordapp.com/embed/avatars/{index}.png"
        return Profile(account_id=user_id, email=_email(data.get("email")),
                       email_verified=data.get("verified") is True,
                       name=data.get("global_name") or data.get("username") or "", image=image, raw=data)
