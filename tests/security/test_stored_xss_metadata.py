"""I3: content a user supplied is never served from the auth origin as active content.

The attack (issue 12, F2): a signed-up user registers a SAML provider whose ``spMetadata.metadata`` is
XHTML with a ``<script>``; ``GET /sso/saml2/sp/metadata`` served it verbatim as ``application/xml``,
so the script ran on the auth origin and its requests passed the Origin check. Now registration
refuses foreign namespaces, the served document is rebuilt from SAML elements only (so a row stored
before the fix is harmless too), and every non-JSON answer carries ``nosniff`` and a sandboxing CSP.
"""

import pytest
from defusedxml import ElementTree

from sso.models import SsoProvider
from tests.conftest import ORIGIN, error_of
from tests.sso.conftest import _sso_defaults, pem_cert, sign_in  # noqa: F401 - fixtures
from tests.test_demo_browser import browser  # noqa: F401 - real Chromium (skipped where it is missing)

MD_NS = "urn:oasis:names:tc:SAML:2.0:metadata"
XHTML_NS = "http://www.w3.org/1999/xhtml"
SVG_NS = "http://www.w3.org/2000/svg"
NOSNIFF = "nosniff"
SANDBOX = "default-src 'none'; sandbox"
SP_DESCRIPTOR = (f'<md:SPSSODescriptor xmlns:md="{MD_NS}" '
                 'protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">'
                 '<md:AssertionConsumerService index="0" '
                 'Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://sp.example/acs"/>'
                 "</md:SPSSODescriptor>")
# The finding's payload: an XHTML page that also carries an SPSSODescriptor, so the old check passed.
XHTML_PAYLOAD = (f'<html xmlns="{XHTML_NS}"><head><title>metadata</title></head><body>'
                 "<script>fetch('/api/auth/change-email',{method:'POST',credentials:'include',"
                 "body:JSON.stringify({newEmail:'attacker@evil.test'})})</script>"
                 f"{SP_DESCRIPTOR}</body></html>")
# A well-formed EntityDescriptor hiding an SVG script in an element SAML allows anything in.
SVG_IN_EXTENSIONS = (f'<md:EntityDescriptor xmlns:md="{MD_NS}" entityID="urn:sp">'
                     f'<md:Extensions><svg xmlns="{SVG_NS}" onload="alert(document.domain)">'
                     "<script>alert(document.cookie)</script></svg></md:Extensions>"
                     + SP_DESCRIPTOR.replace(f' xmlns:md="{MD_NS}"', "") + "</md:EntityDescriptor>")
STYLESHEET_PI = ('<?xml version="1.0"?><?xml-stylesheet type="text/xsl" href="data:text/xsl,x"?>'
                 f'<md:EntityDescriptor xmlns:md="{MD_NS}" entityID="urn:sp">'
                 + SP_DESCRIPTOR.replace(f' xmlns:md="{MD_NS}"', "") + "</md:EntityDescriptor>")
FOREIGN_ATTRIBUTE = (f'<md:EntityDescriptor xmlns:md="{MD_NS}" xmlns:h="{XHTML_NS}" entityID="urn:sp" '
                     'h:onclick="alert(1)">' + SP_DESCRIPTOR.replace(f' xmlns:md="{MD_NS}"', "")
                     + "</md:EntityDescriptor>")


def _body(cert, provider_id="xss-sp", **config):
    saml = {"entryPoint": "https://idp.evil.test/sso", "cert": cert,
            "idpMetadata": {"entityID": "https://idp.evil.test/entity"}, **config}
    return {"providerId": provider_id, "issuer": f"{ORIGIN}/saml/{provider_id}", "domain": "evil.test",
            "samlConfig": {key: value for key, value in saml.items() if value is not None}}


def _metadata(api, provider_id):
    return api.api_get("/sso/saml2/sp/metadata", {"providerId": provider_id})


def _stored_provider(make_user, cert, sp_metadata, provider_id="stored-xss"):
    """A row as the old build stored it: registration never saw this document."""
    owner = make_user(email=f"owner-{provider_id}@evil.test")
    return SsoProvider.objects.create(
        provider_id=provider_id, issuer=f"{ORIGIN}/saml/{provider_id}", domain="evil.test", user=owner,
        saml_config={"entryPoint": "https://idp.evil.test/sso", "cert": cert,
                     "idpMetadata": {"entityID": "https://idp.evil.test/entity"},
                     "spMetadata": {"metadata": sp_metadata}})


@pytest.mark.parametrize("payload", [XHTML_PAYLOAD, SVG_IN_EXTENSIONS, STYLESHEET_PI, FOREIGN_ATTRIBUTE],
                         ids=["xhtml-script", "svg-in-extensions", "xml-stylesheet", "foreign-attribute"])
def test_registration_refuses_sp_metadata_with_foreign_content(sign_in, pem_cert, payload):
    response = sign_in().api_post("/sso/register", _body(pem_cert, spMetadata={"metadata": payload}))
    assert response.status_code == 400, response.content
    assert error_of(response)["code"] in ("SAML_METADATA_FOREIGN_CONTENT", "SAML_INVALID_SP_METADATA")
    assert not SsoProvider.objects.exists()


def test_registration_refuses_idp_metadata_with_foreign_content(sign_in):
    idp_metadata = (f'<md:EntityDescriptor xmlns:md="{MD_NS}" entityID="https://idp.evil.test/entity">'
                    f'<md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">'
                    f'<script xmlns="{XHTML_NS}">alert(1)</script>'
                    '<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" '
                    'Location="https://idp.evil.test/sso"/></md:IDPSSODescriptor></md:EntityDescriptor>')
    response = sign_in().api_post("/sso/register", _body(None, idpMetadata={"metadata": idp_metadata}))
    assert response.status_code == 400, response.content
    assert error_of(response)["code"] == "SAML_METADATA_FOREIGN_CONTENT"


def test_an_update_cannot_smuggle_the_payload_in_either(sign_in, pem_cert):
    client = sign_in()
    assert client.api_post("/sso/register", _body(pem_cert)).status_code == 200
    response = client.api_post("/sso/update-provider", {"providerId": "xss-sp",
                                                        "samlConfig": {"spMetadata": {"metadata": XHTML_PAYLOAD}}})
    assert response.status_code == 400, response.content
    assert _metadata(client, "xss-sp").content.find(b"<script") == -1


@pytest.mark.parametrize("payload", [XHTML_PAYLOAD, SVG_IN_EXTENSIONS, STYLESHEET_PI, FOREIGN_ATTRIBUTE],
                         ids=["xhtml-script", "svg-in-extensions", "xml-stylesheet", "foreign-attribute"])
def test_stored_metadata_is_never_served_verbatim(api, make_user, pem_cert, payload):
    _stored_provider(make_user, pem_cert, payload)
    response = _metadata(api, "stored-xss")
    assert response.status_code == 200
    served = response.content.decode()
    assert served != payload
    for marker in ("<script", "onload", "onclick", "xml-stylesheet", XHTML_NS, SVG_NS, "<html", "<svg"):
        assert marker not in served, marker
    root = ElementTree.fromstring(served)
    assert root.tag == f"{{{MD_NS}}}EntityDescriptor"
    assert {element.tag.split("}", 1)[0].lstrip("{") for element in root.iter()} <= {
        MD_NS, "http://www.w3.org/2000/09/xmldsig#", "http://www.w3.org/2001/04/xmlenc#"}


def test_the_metadata_answer_is_nosniff_and_sandboxed(api, make_user, pem_cert):
    _stored_provider(make_user, pem_cert, XHTML_PAYLOAD)
    response = _metadata(api, "stored-xss")
    assert response["Content-Type"].startswith("application/xml")
    assert response["X-Content-Type-Options"] == NOSNIFF
    assert response["Content-Security-Policy"] == SANDBOX


def test_every_non_json_answer_is_nosniff_and_sandboxed(api, db):
    # A redirect (the SAML ACS GET without a session) and an HTML page (Django's own 404 elsewhere).
    redirect = api.api_get("/sso/saml2/callback/any", {"RelayState": "/x"})
    assert redirect.status_code == 302
    page = api.get("/no-such-page/")
    for response in (redirect, page):
        assert response["X-Content-Type-Options"] == NOSNIFF
        assert "default-src 'none'" in response["Content-Security-Policy"]
        assert "sandbox" in response["Content-Security-Policy"]


@pytest.fixture
def stored_payload_server(live_server, transactional_db, configure, make_user, pem_cert):
    """The live server holding a row with the XHTML page (written before the browser's event loop runs)."""
    configure(base_url=live_server.url)
    _stored_provider(make_user, pem_cert, XHTML_PAYLOAD.replace("<script>", "<script>alert(document.domain);"))
    return live_server.url


def test_in_chromium_the_stored_payload_runs_no_script_on_the_auth_origin(stored_payload_server, browser):
    # The finding's own check, in a real browser: the metadata URL is opened directly.
    context = browser.new_context()
    page = context.new_page()
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    response = page.goto(f"{stored_payload_server}/api/auth/sso/saml2/sp/metadata?providerId=stored-xss")
    page.wait_for_timeout(300)
    assert response.status == 200
    assert dialogs == []
    assert "alert(document.domain)" not in page.content()
    context.close()
