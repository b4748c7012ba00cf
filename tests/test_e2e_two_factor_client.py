"""better-auth's own ``twoFactorClient()`` runs end to end against the server (tests/js/two_factor_flow.mjs):
enable, sign in with TOTP (codes computed in Node), a backup code, then (TOTP off, e-mail codes on) an e-mailed
code, a trusted device, disable."""

import json
import subprocess
from pathlib import Path

import environ
import pytest
from tests.peers.node import node_or_skip

from project import mailers

JS = Path(__file__).resolve().parent / "js"
FLOW = JS / "two_factor_flow.mjs"
STEPS = [
    "signUp.email", "twoFactor.enable", "twoFactor.verifyTotp (enrol)",
    "signIn.email (TOTP user)", "getSession while pending", "twoFactor.verifyTotp", "getSession after verifyTotp",
    "signIn.email (backup code)", "twoFactor.verifyBackupCode",
    "twoFactor.disable (TOTP)", "twoFactor.enable (e-mail codes)",
    "signIn.email (e-mail code)", "twoFactor.sendOtp", "twoFactor.verifyOtp (trustDevice)",
    "signOut (trusted browser)", "signIn.email (trusted device)",
    "twoFactor.disable", "signIn.email after disable",
]


@pytest.mark.e2e
def test_better_auths_two_factor_client_enrols_signs_in_with_every_factor_and_disables(
        live_server, configure, settings, tmp_path):
    node = node_or_skip("better-auth")
    configure(base_url=live_server.url, two_factor={"enabled": True})
    outbox = tmp_path / "outbox"
    for key, value in mailers.mail_settings(environ.Env.email_url_config(f"filemail:///{outbox}")).items():
        setattr(settings, key, value)
    outbox.mkdir()
    completed = subprocess.run([node, str(FLOW), live_server.url, str(outbox)],
                               capture_output=True, text=True, timeout=120, check=False, cwd=JS)
    assert completed.returncode == 0, f"{completed.stdout}\n{completed.stderr}"
    summary = json.loads(completed.stdout)
    assert summary["betterAuthVersion"] == "1.7.5"
    assert [s["step"] for s in summary["steps"]] == STEPS
    assert all(s["status"] == 200 for s in summary["steps"]), summary["steps"]
