"""better-auth's own JavaScript client works against this server end to end (the pinned package in tests/js).

The client runs in Node against a live server, keeps cookies like a browser and sends the page's
Origin; tests/js/client_flow.mjs checks every answer and prints a summary of the steps it took.
"""

import json
import subprocess
from pathlib import Path

import pytest
from tests.peers.node import node_or_skip

JS = Path(__file__).resolve().parent / "js"
FLOW = JS / "client_flow.mjs"
FIELDS_FLOW = JS / "additional_fields_flow.mjs"
STEPS = [
    "signUp.email",
    "getSession",
    "signOut",
    "getSession after signOut",
    "signIn.email",
    "signIn.email (second browser)",
    "listSessions",
    "revokeOtherSessions",
    "listSessions after revokeOtherSessions",
    "getSession in the second browser",
    "changePassword",
    "getSession after changePassword",
    "signIn.email with the new password",
    "signIn.email with the old password",
]


@pytest.mark.e2e
def test_better_auths_client_signs_up_in_and_out_manages_sessions_and_changes_password(live_server, configure):
    node = node_or_skip("better-auth")
    configure(base_url=live_server.url)
    completed = subprocess.run(
        [node, str(FLOW), live_server.url],
        capture_output=True, text=True, timeout=120, check=False, cwd=JS,
    )
    assert completed.returncode == 0, f"{completed.stdout}\n{completed.stderr}"
    summary = json.loads(completed.stdout)
    assert summary["ok"] is True
    assert summary["betterAuthVersion"] == "1.7.5"
    assert [s["step"] for s in summary["steps"]] == STEPS
    assert summary["steps"][-1] == {"step": "signIn.email with the old password", "status": 401,
                                    "code": "INVALID_EMAIL_OR_PASSWORD"}
    assert all(s["status"] == 200 for s in summary["steps"][:-1]), summary["steps"]


@pytest.mark.e2e
def test_better_auths_client_with_infer_additional_fields_writes_and_reads_one(live_server, configure):
    node = node_or_skip("better-auth")
    configure(base_url=live_server.url,
              user={"additional_fields": {"favoriteColor": {"type": "string", "required": False}}})
    completed = subprocess.run(
        [node, str(FIELDS_FLOW), live_server.url],
        capture_output=True, text=True, timeout=120, check=False, cwd=JS,
    )
    assert completed.returncode == 0, f"{completed.stdout}\n{completed.stderr}"
    summary = json.loads(completed.stdout)
    assert [(s["step"], s["status"], s["value"]) for s in summary["steps"]] == [
        ("signUp.email", 200, "teal"),
        ("getSession", 200, "teal"),
        ("updateUser", 200, True),
        ("getSession after updateUser", 200, "plum"),
    ]
