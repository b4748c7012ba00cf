"""docs/reference/settings.md is generated from the code; a test keeps the committed page in step."""

import sys
from pathlib import Path

from authservice import settings_reference
from authservice.management.commands.authservice_settings_reference import documented_apps

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "reference" / "settings.md"
COMMAND = "python manage.py authservice_settings_reference > docs/reference/settings.md"


def test_the_committed_settings_reference_is_what_the_code_generates():
    generated = settings_reference.render(documented_apps(), ROOT / "project" / "settings.py")
    committed = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
    assert committed == generated, f"docs/reference/settings.md is out of date: run `{COMMAND}`"


def test_every_key_of_both_dicts_is_on_the_page():
    page = settings_reference.render(documented_apps())
    for module, _checks in documented_apps():
        for path in _leaf_paths(module.namespace.defaults, module.namespace.raw_dicts):
            assert f"| `{path}` |" in page


FAKE_APP = '''
from authservice.conf import NamespacedSettings
from authservice.setting_types import Optional, URL

DEFAULTS = {
    # Bearer tokens (better-auth's bearer plugin).
    "bearer": {
        # Accept Authorization: Bearer <session token>.
        "enabled": False,
    },
    "callback": None,
}
TYPES = {"callback": Optional(URL())}
namespace = NamespacedSettings("FAKE_SETTINGS", DEFAULTS)
'''

FAKE_SETTINGS_MODULE = '''
import environ
env = environ.Env()
FAKE_SETTINGS = {"bearer": {"enabled": env.bool("AUTH_BEARER", default=False)}}
'''


class FakeChecks:
    SETTING_CHECK_IDS = {"type": "fake.E001", "url": "fake.E002"}


def test_a_new_setting_is_documented_with_its_comment_type_variable_and_checks(tmp_path, monkeypatch):
    (tmp_path / "fake_settings_app.py").write_text(FAKE_APP)
    settings_module = tmp_path / "fake_project_settings.py"
    settings_module.write_text(FAKE_SETTINGS_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import fake_settings_app  # noqa: PLC0415 - written by this test

    monkeypatch.setattr(settings_reference, "_SETTING_NAMES", ("FAKE_SETTINGS",))
    page = settings_reference.render([(fake_settings_app, FakeChecks)], settings_module)
    sys.modules.pop("fake_settings_app")
    assert ("| `bearer.enabled` | `False` | True or False | Accept Authorization: Bearer &lt;session token>. "
            "| `AUTH_BEARER` | `fake.E001` |") in page
    assert "| `callback` | `None` | an absolute http(s) URL, or None |  |  | `fake.E001`, `fake.E002` |" in page


def _leaf_paths(defaults, raw_dicts, prefix=""):
    for key, value in defaults.items():
        if isinstance(value, dict) and key not in raw_dicts:
            yield from _leaf_paths(value, raw_dicts, f"{prefix}{key}.")
        else:
            yield prefix + key
