"""Seed the benchmark database: users with a password (for sign-in) and live sessions (for get-session).

Run with the same environment as the server (DATABASE_URL, SECRET_KEY, AUTH_BASE_URL), so the signed
cookies it writes are the ones the server accepts. Writes two files into the output directory:
``cookies.txt`` (one ``Cookie`` header value per line) and ``emails.txt`` (one address per line).

With ``--saml-cert`` it also registers the SAML provider ``bench-saml`` for example.com (the IdP's
certificate from that file, signed assertions required), marks its domain verified as a finished DNS
check would, and links every user to it, so each SAML sign-in is a returning user's.

The password is hashed once and the hash reused for every user: seeding 1,000 users then costs one
hash instead of a minute of argon2, and sign-in still verifies a real argon2 hash per request.
"""

import argparse
import os
import sys
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.contrib.auth.hashers import make_password  # noqa: E402
from django.utils import timezone  # noqa: E402

from authservice import app_settings, tokens  # noqa: E402
from authservice.cookies import SESSION_TOKEN, cookie_name, signed_value  # noqa: E402
from authservice.models import Account, Session  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--password", default="bench-password-123")
    parser.add_argument("--out", required=True)
    parser.add_argument("--saml-cert", help="PEM certificate of the benchmark's SAML IdP")
    args = parser.parse_args()
    out = Path(args.out)

    User = get_user_model()
    hashed = make_password(args.password)
    now = timezone.now()
    users = [
        User(email=f"bench-{i}@example.com", name=f"Bench {i}", password=hashed, email_verified=True,
             created_at=now, updated_at=now)
        for i in range(args.users)
    ]
    User.objects.bulk_create(users, batch_size=500)
    Account.objects.bulk_create(
        [Account(provider_id=Account.CREDENTIAL, account_id=u.pk, user=u) for u in users], batch_size=500
    )
    # Far from the refresh point (expires_in - update_age): get-session must not write.
    expires = now + timedelta(seconds=app_settings.session.expires_in)
    sessions = [
        Session(token=tokens.session_token(), user=users[i % len(users)], expires_at=expires,
                ip_address="127.0.0.1", user_agent="wrk", created_at=now, updated_at=now)
        for i in range(args.sessions)
    ]
    Session.objects.bulk_create(sessions, batch_size=500)

    if args.saml_cert:
        seed_saml_provider(users, Path(args.saml_cert).read_text())

    name = cookie_name(SESSION_TOKEN)
    (out / "cookies.txt").write_text("".join(f"{name}={signed_value(s.token)}\n" for s in sessions))
    (out / "emails.txt").write_text("".join(f"{u.email}\n" for u in users))
    print(f"seeded {len(users)} users, {len(sessions)} sessions")


def seed_saml_provider(users, cert):
    from saml_pool import SAML_IDP_ENTITY_ID, SAML_PROVIDER, SAML_SP_ENTITY_ID
    from sso.models import SsoProvider
    from sso.providers import build_saml_config

    # The same checks /sso/register runs; the row is then marked verified instead of a DNS lookup.
    config = build_saml_config(SAML_SP_ENTITY_ID, {
        "entryPoint": f"{SAML_IDP_ENTITY_ID}/sso",
        "cert": cert,
        "idpMetadata": {"entityID": SAML_IDP_ENTITY_ID},
        "wantAssertionsSigned": True,
        "mapping": {"email": "email", "name": "displayName"},
    })
    SsoProvider.objects.create(provider_id=SAML_PROVIDER, issuer=SAML_SP_ENTITY_ID, domain="example.com",
                               saml_config=config, user=users[0], domain_verified=True)
    # The NameID is the e-mail: the ACS finds the account by (providerId, NameID).
    Account.objects.bulk_create(
        [Account(provider_id=SAML_PROVIDER, account_id=u.email, user=u) for u in users], batch_size=500
    )


if __name__ == "__main__":
    main()
