from tests.sso.saml.conftest import user_for, session_user

def test_smoke(saml_provider, browser):
    provider = saml_provider("acme-saml")
    response = provider.sp_login(browser, user_for())
    print(response.status_code, response.headers.get("Location"))
    assert response.status_code == 302
    assert response["Location"] == "/dashboard"
    assert session_user(browser)["email"] == "ada@acme.com"
