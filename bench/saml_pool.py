"""Genuine SP-initiated SAML sign-ins for the ACS benchmark, prepared before wrk runs.

``saml_pool.py BASE_URL --emails FILE --key IDP_KEY --cert IDP_CERT --count N --out POOL --check-out CHECK``

For each of N + 1 sign-ins, as a browser and an IdP would: ``POST /sign-in/sso`` for the seeded
provider (the service stores the AuthnRequest ID and the RelayState), then a SAMLResponse answering
that AuthnRequest (InResponseTo, Destination = the ACS URL it names, the seeded users in turn as
NameID), its Assertion signed with the IdP key by ``xmlsec1`` as the SAML tests sign
(tests/sso/saml/idp_signer.py). Every assertion has its own ID: replay protection is always on.

Writes one form-encoded ACS body (``SAMLResponse=...&RelayState=...``), a tab and the browser's
``relay_state`` cookie (``name=value``, sent as the Cookie header) per line: the first sign-in
to CHECK (check.py posts it), the N others to POOL (bench/saml_acs.lua). AuthnRequests expire after
``request_ttl`` (5 minutes), so the pool is made right before its run.
"""

import argparse
import concurrent.futures
import datetime
import json
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

from defusedxml import ElementTree

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.sso.saml import idp_signer  # noqa: E402

# The provider seed.py registers (it imports these names).
SAML_PROVIDER = "bench-saml"
SAML_IDP_ENTITY_ID = "https://idp.bench.test"
SAML_SP_ENTITY_ID = "https://sp.bench.test/saml"

# Longer than the 5-minute default of the test IdP: the pool is used up to a few minutes after signing.
VALIDITY = datetime.timedelta(minutes=20)


def start_sign_in(base):
    """POST /sign-in/sso; returns (AuthnRequest ID, ACS URL, RelayState, the relay_state cookie as
    ``name=value``: the ACS refuses a RelayState without the cookie of the browser that started it)."""
    body = json.dumps({"providerId": SAML_PROVIDER, "callbackURL": "/dashboard"}).encode()
    request = urllib.request.Request(base + "/api/auth/sign-in/sso", data=body, method="POST",
                                     headers={"Content-Type": "application/json", "Origin": base})
    with urllib.request.urlopen(request, timeout=30) as response:
        url = json.loads(response.read())["url"]
        cookie = next(value.split(";", 1)[0] for value in response.headers.get_all("Set-Cookie") or []
                      if "relay_state=" in value.split(";", 1)[0])
    query = parse_qs(urlsplit(url).query)
    root = ElementTree.fromstring(idp_signer.authn_request(query["SAMLRequest"][0]))
    return root.get("ID"), root.get("AssertionConsumerServiceURL"), query["RelayState"][0], cookie


def one(base, email, keypair, tmp):
    request_id, acs_url, relay_state, cookie = start_sign_in(base)
    issued = idp_signer.now()
    claims = idp_signer.Claims(
        issuer=SAML_IDP_ENTITY_ID, destination=acs_url, audience=SAML_SP_ENTITY_ID, in_response_to=request_id,
        name_id=email, attributes={"email": email, "displayName": email.split("@")[0]},
        issue_instant=issued, not_on_or_after=issued + VALIDITY,
    )
    signed = idp_signer.sign(idp_signer.response_xml(claims), keypair, claims.assertion_id, tmp)
    return urlencode({"SAMLResponse": idp_signer.encode(signed), "RelayState": relay_state}) + "\t" + cookie


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("base")
    parser.add_argument("--emails", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--cert", required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--check-out", required=True)
    parser.add_argument("--jobs", type=int, default=4)
    args = parser.parse_args()
    base = args.base.rstrip("/")
    emails = [line.strip() for line in open(args.emails) if line.strip()]
    keypair = idp_signer.KeyPair(Path(args.key), Path(args.cert))
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:  # xmlsec1 and HTTP release the GIL
        bodies = list(pool.map(lambda i: one(base, emails[i % len(emails)], keypair, tmp), range(args.count + 1)))
    Path(args.check_out).write_text(bodies[0] + "\n")
    Path(args.out).write_text("".join(body + "\n" for body in bodies[1:]))
    print(f"{args.count} signed SAML responses in {time.monotonic() - started:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
