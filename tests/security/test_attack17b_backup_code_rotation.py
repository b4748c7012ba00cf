"""Attack 17b (availability of recovery): backup codes across a rotation of the deployment secret.

docs/mfa.md's rotation recipe keeps the old secret as a fallback so that every second factor goes on
working meanwhile. TOTP secrets do (MultiFernet). Backup codes are stored as hashes keyed with the
*current* secret only, so the first rotation silently turns every user's recovery codes into
INVALID_BACKUP_CODE: a user who lost the phone is locked out, and no command can re-key a hash.
"""

import pytest

from tests.conftest import PASSWORD, ApiClient
from tests.two_factor_support import code, enrol, start_sign_in

pytestmark = pytest.mark.django_db

OLD = "old-deployment-secret-" + "o" * 32
NEW = "new-deployment-secret-" + "n" * 32


@pytest.fixture
def enrolled_before_rotation(make_user, configure):
    configure(secret=OLD)
    user = make_user()
    api = ApiClient()
    assert api.api_post("/sign-in/email", {"email": user.email, "password": PASSWORD}).status_code == 200
    secret, backup_codes = enrol(api)
    configure(secret=NEW, two_factor={"secret_fallbacks": [OLD]})
    return user, secret, backup_codes


def test_a_backup_code_still_works_while_the_old_secret_is_a_fallback(enrolled_before_rotation):
    user, _, backup_codes = enrolled_before_rotation
    response = start_sign_in(user.email).api_post("/two-factor/verify-backup-code", {"code": backup_codes[0]})
    assert response.status_code == 200, response.content


def test_a_totp_code_still_works_while_the_old_secret_is_a_fallback(enrolled_before_rotation):
    user, secret, _ = enrolled_before_rotation
    response = start_sign_in(user.email).api_post("/two-factor/verify-totp", {"code": code(secret, 1)})
    assert response.status_code == 200, response.content



def test_a_code_hashed_before_the_rotation_matches_while_the_old_secret_is_a_fallback(configure):
    # Mailed codes are hashed like backup codes (the pending sign-in cookie itself ends with the old
    # secret, docs/mfa.md, so this is checked where both kinds are compared).
    from authservice.two_factor import crypto

    configure(secret=OLD)
    stored = crypto.code_hash("123456")
    configure(secret=NEW, two_factor={"secret_fallbacks": [OLD]})
    assert stored in crypto.code_hashes("123456")
    configure(secret=NEW, two_factor={"secret_fallbacks": []})
    assert stored not in crypto.code_hashes("123456")
