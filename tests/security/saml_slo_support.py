"""Fixtures and a hostile IdP for the SAML Single Logout attack files (tests/security/test_saml_slo_*.py).

The IdP's logout messages are written here and signed by the ``xmlsec1`` binary (HTTP-POST) or by
``cryptography`` (HTTP-Redirect query signatures), never by our own code, so a bug in our signer
cannot hide one in our verifier. Two providers: ``acme`` (the victim's company, IdP key ``idp``) and
``evil`` (the attacker's own, verified for their domain, IdP key ``other``). Victims are signed in with
a password and given the SamlSession the ACS would have recorded.
"""

import base64
import datetime
import subprocess
import uuid
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote_plus, urlencode
from xml.sax.saxutils import escape, quoteattr

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding

from authservice.models import Session
from sso.models import SamlSession, SsoProvider
from tests.conftest import BASE, ORIGIN, PASSWORD, ApiClient
from tests.sso.conftest import configure_sso  # noqa: F401 - fixture
from tests.sso.saml import idp_signer

SAMLP, SAML = idp_signer.SAMLP, idp_signer.SAML
REDIRECT = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"
POST = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"
RSA_SHA256 = idp_signer.RSA_SHA256
FORM = "application/x-www-form-urlencoded"
IDP_ORIGIN = "https://idp.example"


def idp_entity(name):
    return f"{IDP_ORIGIN}/{name}"


def slo_path(provider_id):
    return f"{BASE}/sso/saml2/sp/slo/{provider_id}"


def slo_url(provider_id):
    return f"{ORIGIN}{slo_path(provider_id)}"


@dataclass
class Message:
    """One logout message of the IdP; a test changes a field to build one that must fail."""

    issuer: str
    destination: str
    kind: str = "LogoutRequest"
    name_id: str = "ada@acme.com"
    session_index: str | None = "_session-ada"
    in_response_to: str | None = None
    status: str = idp_signer.SUCCESS
    message_id: str = field(default_factory=lambda: "_" + uuid.uuid4().hex)
    issue_instant: datetime.datetime = field(default_factory=idp_signer.now)
    not_on_or_after: datetime.datetime | None = None
    extra: str = ""  # raw XML appended inside the message (structure attacks)

    def xml(self):
        irt = f" InResponseTo={quoteattr(self.in_response_to)}" if self.in_response_to else ""
        noa = f' NotOnOrAfter="{idp_signer.iso(self.not_on_or_after)}"' if self.not_on_or_after else ""
        head = (f'<samlp:{self.kind} xmlns:samlp="{SAMLP}" xmlns:saml="{SAML}" ID="{self.message_id}"'
                f' Version="2.0" IssueInstant="{idp_signer.iso(self.issue_instant)}"'
                f" Destination={quoteattr(self.destination)}{irt}{noa}>"
                f"<saml:Issuer>{escape(self.issuer)}</saml:Issuer>")
        if self.kind == "LogoutRequest":
            index = (f"<samlp:SessionIndex>{escape(self.session_index)}</samlp:SessionIndex>"
                     if self.session_index else "")
            body = f"<saml:NameID>{escape(self.name_id)}</saml:NameID>{index}"
        else:
            body = f'<samlp:Status><samlp:StatusCode Value="{self.status}"/></samlp:Status>'
        return f"{head}{body}{self.extra}</samlp:{self.kind}>"


def sign_xml(xml, keypair, message_id, tmp_path):
    """``xml`` with an enveloped signature by ``keypair`` (the xmlsec1 binary), after its Issuer."""
    tmp_path = Path(tmp_path)
    source = tmp_path / f"logout-{uuid.uuid4().hex}.xml"
    source.write_text(idp_signer._insert_after_issuer(xml, message_id, idp_signer.signature_template(message_id)))
    result = subprocess.run(
        ["xmlsec1", "--sign", "--privkey-pem", f"{keypair.key_path},{keypair.cert_path}",
         "--id-attr:ID", f"{SAMLP}:LogoutRequest", "--id-attr:ID", f"{SAMLP}:LogoutResponse",
         "--node-id", message_id, "--output", "/dev/stdout", str(source)], capture_output=True, text=True)
    source.unlink()
    assert result.returncode == 0, result.stderr
    signed = result.stdout
    return signed.split("?>", 1)[1].lstrip("\n") if signed.startswith("<?xml") else signed


def post_form(message, keypair=None, tmp_path=None, relay_state=None):
    """The form body (urlencoded) an IdP posts; signed by ``keypair`` unless None."""
    xml = message.xml()
    if keypair is not None:
        xml = sign_xml(xml, keypair, message.message_id, tmp_path)
    param = "SAMLRequest" if message.kind == "LogoutRequest" else "SAMLResponse"
    data = {param: base64.b64encode(xml.encode()).decode()}
    if relay_state is not None:
        data["RelayState"] = relay_state
    return urlencode(data)


def deflate(text):
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    return base64.b64encode(compressor.compress(text.encode()) + compressor.flush()).decode()


def redirect_query(message, keypair=None, relay_state=None, sig_alg=RSA_SHA256, xml=None):
    """The HTTP-Redirect query, its signature (when ``keypair``) by ``cryptography`` over the raw parts."""
    param = "SAMLRequest" if message.kind == "LogoutRequest" else "SAMLResponse"
    query = f"{param}={quote_plus(deflate(xml or message.xml()))}"
    if relay_state is not None:
        query += f"&RelayState={quote_plus(relay_state)}"
    if keypair is None:
        return query
    query += f"&SigAlg={quote_plus(sig_alg)}"
    key = serialization.load_pem_private_key(keypair.key_path.read_bytes(), None)
    value = key.sign(query.encode(), padding.PKCS1v15(), hashes.SHA256())
    return query + "&Signature=" + quote_plus(base64.b64encode(value).decode())


@pytest.fixture(scope="session")
def slo_keys(tmp_path_factory):
    idp_signer.require_binaries()
    directory = tmp_path_factory.mktemp("slo-keys")
    return {name: idp_signer.make_keypair(directory, name) for name in ("idp", "other", "sp")}


def make_provider(owner, name, domain, idp_key, sp_key, **config):
    sp_entity = f"{ORIGIN}/sp/{name}"
    return SsoProvider.objects.create(
        provider_id=name, issuer=sp_entity, domain=domain, user=owner, domain_verified=True,
        saml_config={"issuer": sp_entity, "entryPoint": f"{IDP_ORIGIN}/{name}/sso", "cert": idp_key.cert_pem,
                     "idpMetadata": {"entityID": idp_entity(name), "singleLogoutService": [
                         {"Binding": REDIRECT, "Location": f"{IDP_ORIGIN}/{name}/slo"},
                         {"Binding": POST, "Location": f"{IDP_ORIGIN}/{name}/slo"}]},
                     "spMetadata": {"privateKey": sp_key.key_path.read_text(), "signingCert": sp_key.cert_pem},
                     **config})


@pytest.fixture
def slo_on(configure_sso):  # noqa: F811
    configure_sso(saml={"enable_single_logout": True})


@pytest.fixture
def acme(slo_on, make_user, slo_keys):
    owner = make_user(email="owner@acme.com")
    return make_provider(owner, "acme", "acme.com", slo_keys["idp"], slo_keys["sp"])


@pytest.fixture
def evil(slo_on, make_user, slo_keys):
    """The attacker's own provider: a verified domain of theirs, their own IdP key."""
    owner = make_user(email="mallory@evil.test")
    return make_provider(owner, "evil", "evil.test", slo_keys["other"], slo_keys["sp"])


def saml_signed_in(make_user, provider, email, session_index):
    """A browser (ApiClient) with a session for ``email``, recorded as opened by ``provider``'s IdP."""
    user = make_user(email=email, email_verified=True)
    client = ApiClient()
    response = client.api_post("/sign-in/email", {"email": email, "password": PASSWORD})
    assert response.status_code == 200, response.content
    session = Session.objects.filter(user=user).latest("created_at")
    SamlSession.objects.create(session=session, provider=provider, name_id=email, session_index=session_index)
    client.session_row = session
    return client


def alive(client):
    return Session.objects.filter(pk=client.session_row.pk).exists()


def post_slo(provider_id, form, client=None):
    """POST the IdP's form to our SLO service cross-site (the IdP's Origin)."""
    client = client or ApiClient(origin=None)
    return client.post(slo_path(provider_id), form, content_type=FORM, HTTP_ORIGIN=IDP_ORIGIN)


def get_slo(provider_id, query, client=None):
    client = client or ApiClient(origin=None)
    return client.get(f"{slo_path(provider_id)}?{query}")


def refusal(response):
    assert response.status_code == 400, (response.status_code, response.content)
    body = response.json()
    return body["code"], body["message"]
