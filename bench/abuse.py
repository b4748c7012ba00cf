"""I6 benchmark: what the heaviest unauthenticated inputs cost, per request, in-process.

``python bench/abuse.py [--repeat 5] [--json OUT] [--only TEXT]``

Invariant I6 (docs/security.md): a request under 64 KiB costs under 100 ms of CPU and under
50 MB of memory. This script sends the inputs below through the whole Django stack (middleware,
body parsing, the endpoint) with ``django.test.Client``, no HTTP server, on a fresh SQLite database
in a temporary directory (or ``DATABASE_URL`` if set: migrate runs on it, so use a scratch one).
It seeds a verified OIDC provider for ``corp.com``, 200 providers owning 2,000 indexed domains, and
a SAML provider with a certificate, so routing and the ACS do their real work.

Per input it prints the status and code, the body size, and:
- CPU ms: median over ``--repeat`` runs of ``time.process_time()`` around the request (user + system
  CPU of this process; nothing else runs in it);
- peak MB (Python): tracemalloc's peak of Python allocations during one request, a separate run
  because tracing slows everything down;
- peak MB (RSS): growth of the process's resident high-water mark (``VmHWM``, reset before each
  request through ``/proc/self/clear_refs``), which also sees C allocations (libxml2, SQLite).

The rate limiter is off, as in bench/run.sh: it would answer 429 long before these inputs are read.
"""

import argparse
import base64
import json
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
KIB = 1024
TARGET_CPU_MS = 100
TARGET_MB = 50


def setup_django(workdir):
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{workdir}/abuse.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
    os.environ["AUTH_RATE_LIMIT"] = "false"
    os.environ["DEBUG"] = "false"
    os.environ["AUTH_SSO_SAML_ENABLE_SINGLE_LOGOUT"] = "true"  # the SLO rows reach the logout checks
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def certificate_pem():
    from datetime import datetime, timedelta, timezone

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "bench idp")])
    now = datetime.now(timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now - timedelta(days=1)).not_valid_after(now + timedelta(days=30))
            .sign(key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def seed():
    from django.contrib.auth import get_user_model

    from sso.models import SsoProvider

    owner = get_user_model().objects.create_user(email="owner@corp.com", password=None)
    idp = "https://idp.corp.com"
    oidc = {"issuer": idp, "clientId": "corp", "clientSecret": "s", "pkce": True,
            "authorizationEndpoint": f"{idp}/authorize", "tokenEndpoint": f"{idp}/token",
            "jwksEndpoint": f"{idp}/jwks", "tokenEndpointAuthentication": "client_secret_basic"}
    SsoProvider.objects.create(provider_id="corp", issuer=idp, domain="corp.com", oidc_config=oidc, user=owner,
                               domain_verified=True)
    for index in range(200):
        domains = ", ".join(f"d{index}-{n}.example" for n in range(10))
        SsoProvider.objects.create(provider_id=f"p{index}", issuer=idp, domain=domains, oidc_config=oidc,
                                   user=owner, domain_verified=index % 2 == 0)
    sp = "http://127.0.0.1:8000/api/auth/sso/saml2/sp/metadata"
    SsoProvider.objects.create(
        provider_id="bench-saml", issuer=sp, domain="saml.example", user=owner, domain_verified=True,
        saml_config={"issuer": sp, "entryPoint": "https://idp.saml.example/sso", "cert": certificate_pem(),
                     "idpMetadata": {"entityID": "https://idp.saml.example", "singleLogoutService": [
                         {"Binding": "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect",
                          "Location": "https://idp.saml.example/slo"}]},
                     "wantAssertionsSigned": True})


# --- the inputs -------------------------------------------------------------------------------------
SIGN_IN = "/api/auth/sign-in/sso"
ACS = "/api/auth/sso/saml2/callback/bench-saml"
SAMLP = "urn:oasis:names:tc:SAML:2.0:protocol"
SAML = "urn:oasis:names:tc:SAML:2.0:assertion"
DS = "http://www.w3.org/2000/09/xmldsig#"


def _json(body):
    return json.dumps(body).encode(), "application/json"


def _sign_in(**fields):
    return _json({"callbackURL": "/dashboard", **fields})


def _acs(xml_text=None, raw=None):
    value = raw if raw is not None else base64.b64encode(xml_text.encode()).decode()
    return urlencode({"SAMLResponse": value}).encode(), "application/x-www-form-urlencoded"


SLO = "/api/auth/sso/saml2/sp/slo/bench-saml"


def _slo(xml_text=None, raw=None):
    value = raw if raw is not None else base64.b64encode(xml_text.encode()).decode()
    return urlencode({"SAMLRequest": value}).encode(), "application/x-www-form-urlencoded"


def _as_logout_request(response_xml):
    """The same hostile content as a LogoutRequest (the SLO service's root element)."""
    return response_xml.replace("samlp:Response", "samlp:LogoutRequest")


def _deflate_bomb(size):
    """A GET whose SAMLRequest inflates to about 1,000 times its size (HTTP-Redirect binding)."""
    import zlib

    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    deflated = compressor.compress(b"<" + b"A" * (size * 1000)) + compressor.flush()
    return f"{SLO}?{urlencode({'SAMLRequest': base64.b64encode(deflated).decode()})}", b"", "GET"


def _deep_json(size):
    depth = size // 2 - 40
    text = '{"callbackURL": "/dashboard", "domain": "corp.com", "additionalParams": ' + "[" * depth + "]" * depth + "}"
    return text.encode(), "application/json"


def _nested_xml(size):
    depth = (size * 3 // 4 - 200) // 9
    return (f'<samlp:Response xmlns:samlp="{SAMLP}" ID="r">' + "<a><b>x" * (depth // 2)
            + "</b></a>" * (depth // 2) + "</samlp:Response>")


def _wrapped_xml(size):
    # Many Assertions and Signatures, each with an ID: what a wrapping attack multiplies.
    one = (f'<saml:Assertion xmlns:saml="{SAML}" ID="a{{n}}"><saml:Issuer>https://idp.saml.example</saml:Issuer>'
           f'<ds:Signature xmlns:ds="{DS}"><ds:SignedInfo><ds:Reference URI="#a{{n}}"/></ds:SignedInfo>'
           f'</ds:Signature><saml:Subject><saml:NameID>ceo@corp.com</saml:NameID></saml:Subject></saml:Assertion>')
    count = (size * 3 // 4) // len(one.format(n=1000))
    return (f'<samlp:Response xmlns:samlp="{SAMLP}" ID="r"><saml:Issuer xmlns:saml="{SAML}">'
            f'https://idp.saml.example</saml:Issuer>' + "".join(one.format(n=n) for n in range(count))
            + "</samlp:Response>")


def _signed_assertion(size):
    # One Response, one Assertion with its own enveloped Signature: past the structure checks, into
    # canonicalisation and the signature check, with the room filled by attribute values.
    attribute = ('<saml:Attribute Name="a{n}"><saml:AttributeValue>' + "v" * 40
                 + "</saml:AttributeValue></saml:Attribute>")
    count = (size * 3 // 4 - 2000) // len(attribute.format(n=1000))
    signature = (f'<ds:Signature xmlns:ds="{DS}"><ds:SignedInfo>'
                 '<ds:CanonicalizationMethod Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/>'
                 '<ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/>'
                 '<ds:Reference URI="#a1"><ds:Transforms>'
                 '<ds:Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"/>'
                 '<ds:Transform Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/></ds:Transforms>'
                 '<ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/>'
                 f'<ds:DigestValue>{"A" * 43}=</ds:DigestValue></ds:Reference></ds:SignedInfo>'
                 f'<ds:SignatureValue>{"A" * 342}==</ds:SignatureValue></ds:Signature>')
    return (f'<samlp:Response xmlns:samlp="{SAMLP}" xmlns:saml="{SAML}" ID="r" Version="2.0" '
            'IssueInstant="2026-01-01T00:00:00Z"><saml:Issuer>https://idp.saml.example</saml:Issuer>'
            f'<samlp:Status><samlp:StatusCode Value="{SAMLP[:-8]}status:Success"/></samlp:Status>'
            '<saml:Assertion ID="a1" Version="2.0" IssueInstant="2026-01-01T00:00:00Z">'
            f'<saml:Issuer>https://idp.saml.example</saml:Issuer>{signature}'
            '<saml:Subject><saml:NameID>ceo@corp.com</saml:NameID></saml:Subject><saml:AttributeStatement>'
            + "".join(attribute.format(n=n) for n in range(count))
            + "</saml:AttributeStatement></saml:Assertion></samlp:Response>")


def _c14n_heavy(namespaces, elements, reference_c14n, chain=1):
    # Second attack pass on issue 12: canonicalisation is done before any signature value is compared,
    # and inclusive c14n renders every in-scope namespace on every element (cost ~ elements x
    # namespaces^2); a chain of c14n transforms canonicalises the document once per link.
    declarations = " ".join(f'xmlns:n{i}="u:{i}"' for i in range(namespaces))
    transforms = f'<ds:Transform Algorithm="{reference_c14n}"/>' * chain
    signature = (f'<ds:Signature xmlns:ds="{DS}"><ds:SignedInfo>'
                 '<ds:CanonicalizationMethod Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/>'
                 '<ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/>'
                 '<ds:Reference URI="#r"><ds:Transforms>'
                 f'<ds:Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"/>{transforms}'
                 '</ds:Transforms><ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/>'
                 f'<ds:DigestValue>{"A" * 43}=</ds:DigestValue></ds:Reference></ds:SignedInfo>'
                 f'<ds:SignatureValue>{"A" * 342}==</ds:SignatureValue></ds:Signature>')
    return (f'<samlp:Response xmlns:samlp="{SAMLP}" xmlns:saml="{SAML}" {declarations} ID="r" Version="2.0" '
            'IssueInstant="2026-01-01T00:00:00Z"><saml:Issuer>https://idp.saml.example</saml:Issuer>'
            f'{signature}<samlp:Status><samlp:StatusCode Value="{SAMLP[:-8]}status:Success"/></samlp:Status>'
            '<saml:Assertion ID="a1" Version="2.0" IssueInstant="2026-01-01T00:00:00Z">'
            f'<saml:Issuer>https://idp.saml.example</saml:Issuer>{"<x/>" * elements}</saml:Assertion>'
            "</samlp:Response>")


def _entity_expansion():
    entities = '<!ENTITY e0 "ha">' + "".join(f'<!ENTITY e{n} "{("&e" + str(n - 1) + ";") * 10}">'
                                               for n in range(1, 10))
    return f'<?xml version="1.0"?><!DOCTYPE r [{entities}]><samlp:Response xmlns:samlp="{SAMLP}">&e9;</samlp:Response>'


def inputs(size=63 * KIB):
    """(label, path, body, content type): the heaviest inputs we know for each unauthenticated parser."""
    labels_31k = "a." * (31 * KIB // 2) + "com"
    return [
        ("sign-in/sso domain: 31 KiB of one-letter labels (F3)", SIGN_IN, *_sign_in(domain=labels_31k)),
        ("sign-in/sso domain: 63 KiB in one label", SIGN_IN, *_sign_in(domain="a" * size)),
        ("sign-in/sso email: 63 KiB, 31 KiB domain", SIGN_IN,
         *_sign_in(email="a" * (size // 2) + "@" + "b." * (size // 4) + "com")),
        ("sign-in/sso domain: deepest valid (253 chars, 124 labels), routed and started", SIGN_IN,
         *_sign_in(domain="a." * 121 + "bb.corp.com")),
        ("sign-in/sso email: longest valid (254 chars), routed and started", SIGN_IN,
         *_sign_in(email="a@" + "a." * 122 + "corp.com")),
        ("sign-in/sso: 63 KiB of nested JSON arrays", SIGN_IN, *_deep_json(size)),
        ("sign-in/sso: 7,000 scopes, routed and started", SIGN_IN,
         *_sign_in(email="ada@corp.com", scopes=[f"s{n}" for n in range(7000)])),
        ("sign-in/sso: 3,500 additionalParams, routed and started", SIGN_IN,
         *_sign_in(email="ada@corp.com", additionalParams={f"k{n}": "v" * 6 for n in range(3500)})),
        ("SAML ACS: 63 KiB of base64 garbage", ACS, *_acs(raw="QUJD" * (size // 4 - 8))),
        ("SAML ACS: 63 KiB, XML nested 3,500 deep", ACS, *_acs(_nested_xml(size))),
        ("SAML ACS: 63 KiB, ~100 signed-looking Assertions", ACS, *_acs(_wrapped_xml(size))),
        ("SAML ACS: 63 KiB, one signed Assertion with 1,000 attributes (bad signature)", ACS,
         *_acs(_signed_assertion(size))),
        ("SAML ACS: entity expansion (10^9 'ha')", ACS, *_acs(_entity_expansion())),
        ("SAML ACS: inclusive c14n, 2,000 namespaces x 2,000 elements (was 74 s)", ACS,
         *_acs(_c14n_heavy(2000, 2000, "http://www.w3.org/TR/2001/REC-xml-c14n-20010315"))),
        ("SAML ACS: exclusive c14n, 2,000 namespaces x 2,000 elements", ACS,
         *_acs(_c14n_heavy(2000, 2000, "http://www.w3.org/2001/10/xml-exc-c14n#"))),
        ("SAML ACS: 300 chained c14n transforms over 4,000 elements", ACS,
         *_acs(_c14n_heavy(0, 4000, "http://www.w3.org/2001/10/xml-exc-c14n#", chain=300))),
        ("SAML SLO: 63 KiB of base64 garbage", SLO, *_slo(raw="QUJD" * (size // 4 - 8))),
        ("SAML SLO: 63 KiB, XML nested 3,500 deep", SLO, *_slo(_as_logout_request(_nested_xml(size)))),
        ("SAML SLO: exclusive c14n, 2,000 namespaces x 2,000 elements", SLO,
         *_slo(_as_logout_request(_c14n_heavy(2000, 2000, "http://www.w3.org/2001/10/xml-exc-c14n#")))),
        ("SAML SLO: entity expansion (10^9 'ha')", SLO, *_slo(_as_logout_request(_entity_expansion()))),
        ("SAML SLO (GET): deflate bomb, 63 KiB inflating to 63 MiB", *_deflate_bomb(size)),
    ]


# --- measuring --------------------------------------------------------------------------------------
def _status(response):
    code = ""
    if response.get("Content-Type", "").startswith("application/json"):
        try:
            code = json.loads(response.content).get("code") or ""
        except (ValueError, AttributeError):
            code = ""
    elif response.status_code in (301, 302):
        location = response["Location"]
        code = location.split("error=", 1)[1].split("&", 1)[0] if "error=" in location else "redirect"
    return f"{response.status_code} {code}".strip()


def _hwm_kib():
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def _reset_hwm():
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
        return True
    except OSError:
        return False


def measure(path, body, content_type, repeat):
    """One fresh client (no cookies) per request: an outsider's request, as the attacker sends it.
    ``content_type`` "GET" sends a GET of ``path`` (its query holds the input)."""
    from django.test import Client

    extra = {"HTTP_ORIGIN": "https://idp.saml.example"} if "saml2" in path else {}
    if content_type == "GET":
        def send():
            return Client().get(path, **extra)

        return _measured(send, len(path), repeat)

    def send():
        return Client().generic("POST", path, body, content_type=content_type, **extra)

    return _measured(send, len(body), repeat)


def _measured(send, size, repeat):
    response = send()  # warm-up
    cpu = []
    for _ in range(repeat):
        start = time.process_time()
        send()
        cpu.append((time.process_time() - start) * 1000)
    rss_mb = None
    if _reset_hwm():
        base = _hwm_kib()
        send()
        rss_mb = (_hwm_kib() - base) / KIB
    tracemalloc.start()
    tracemalloc.reset_peak()
    send()
    python_mb = tracemalloc.get_traced_memory()[1] / (KIB * KIB)
    tracemalloc.stop()
    return {"status": _status(response), "bytes": size, "cpu_ms": statistics.median(cpu),
            "cpu_ms_max": max(cpu), "python_mb": python_mb, "rss_mb": rss_mb}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", help="also write the figures here")
    parser.add_argument("--only", help="only the inputs whose label contains this text")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="authservice-abuse.") as workdir:
        setup_django(workdir)
        seed()
        rows = []
        for label, path, body, content_type in inputs():
            if args.only and args.only not in label:
                continue
            rows.append({"input": label, **measure(path, body, content_type, args.repeat)})
    print("| input | answer | body KiB | CPU ms (median / max) | peak MB Python | peak MB RSS | I6 |")
    print("|---|---|---:|---:|---:|---:|---|")
    for row in rows:
        rss = "-" if row["rss_mb"] is None else f"{row['rss_mb']:.1f}"
        ok = row["cpu_ms_max"] < TARGET_CPU_MS and max(row["python_mb"], row["rss_mb"] or 0) < TARGET_MB
        print(f"| {row['input']} | {row['status']} | {row['bytes'] / KIB:.1f} | {row['cpu_ms']:.1f} / "
              f"{row['cpu_ms_max']:.1f} | {row['python_mb']:.1f} | {rss} | {'ok' if ok else 'OVER'} |")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0 if all(row["cpu_ms_max"] < TARGET_CPU_MS for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
