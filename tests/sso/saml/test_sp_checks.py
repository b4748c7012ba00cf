"""System check sso.E010: pysaml2 cannot verify anything without the xmlsec1 binary."""

from django.core.checks import run_checks


def test_no_error_when_xmlsec1_is_installed():
    assert not [e for e in run_checks() if e.id == "sso.E010"]


def test_a_missing_xmlsec1_binary_is_a_clear_startup_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    [error] = [e for e in run_checks() if e.id == "sso.E010"]
    assert "xmlsec1" in error.msg and "apt-get install xmlsec1" in error.hint
