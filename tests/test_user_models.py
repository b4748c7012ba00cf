"""authservice serves any AUTH_USER_MODEL (issue 13): the mapping of better-auth's user record, the
user-model checks, and adopting authservice in a project whose auth.User users are migrated already.

The mapping tests run under whichever user model the settings name; the default suite also runs them
under ``tests.settings_auth_user`` and ``tests.settings_email_user`` (a subprocess each).
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import User as DjangoUser
from django.db import models
from django.test.utils import isolate_apps

from authservice import users, user_checks
from authservice.adapter import get_adapter
from authservice.models import AuthProfile
from tests.conftest import PASSWORD
from tests.subprocess_pytest import run_pytest

ROOT = Path(__file__).resolve().parent.parent
uses_profile_name = pytest.mark.skipif(users.layout().name != "profile", reason="the model stores the name itself")
needs_username = pytest.mark.skipif(get_user_model().USERNAME_FIELD == users.email_field(),
                                    reason="the model's username is its e-mail")
needs_first_last = pytest.mark.skipif(users.layout().name != "first_last", reason="no first_name/last_name")
needs_profile = pytest.mark.skipif(not users.layout().needs_profile, reason="the model has every field")


# --- the mapping, under the configured model -------------------------------------------------------
def test_the_wire_id_is_a_string(make_user):
    user = make_user()
    assert users.to_wire(user)["id"] == str(user.pk)


def test_the_wire_record_has_better_auths_keys(make_user):
    record = users.to_wire(make_user(name="Ada Lovelace", image="https://example.com/ada.png"))
    # twoFactorEnabled: the twoFactor plugin, on in the example project, adds it as better-auth does.
    assert list(record) == ["id", "name", "email", "emailVerified", "image", "createdAt", "updatedAt",
                            "twoFactorEnabled"]
    assert record["name"] == "Ada Lovelace"
    assert record["email"] == "ada@example.com"
    assert record["image"] == "https://example.com/ada.png"
    assert record["emailVerified"] is False


def test_email_verified_round_trips(make_user):
    user = make_user()
    users.update(user, email_verified=True)
    assert users.is_email_verified(users.find_by_pk(str(user.pk))) is True


def test_an_update_moves_updated_at(make_user):
    user = make_user()
    before = users.updated_at_of(user)
    users.update(user, name="Grace")
    fresh = users.find_by_pk(user.pk)
    assert users.name_of(fresh) == "Grace"
    assert users.updated_at_of(fresh) >= before


def test_find_by_email_ignores_case(make_user):
    user = make_user(email="ada@example.com")
    assert users.find_by_email("ADA@Example.COM").pk == user.pk


def _stored_as_typed(email, username):
    """A row the host wrote itself, its address in the case it was typed (skipped for our own model)."""
    if users.layout().own:
        pytest.skip("our own model stores every address lower-case")
    model = get_user_model()
    fields = {users.email_field(): email}
    if model.USERNAME_FIELD != users.email_field():
        fields[model.USERNAME_FIELD] = username
    return model._default_manager.create(**fields)


def test_an_address_stored_in_another_case_is_taken(db):
    owner = _stored_as_typed("Ada@Example.com", "ada")
    assert users.email_taken("ada@example.com")
    assert not users.email_taken("ada@example.com", exclude=owner)


def test_the_oldest_holder_of_an_address_owns_it_whatever_the_case(db):
    model = get_user_model()
    if model._meta.get_field(users.email_field()).unique:
        pytest.skip("the model's e-mail is unique")
    oldest = _stored_as_typed("Ada@Example.com", "ada")
    _stored_as_typed("ada@example.com", "ada2")
    assert users.find_by_email("ada@example.com").pk == oldest.pk


def test_a_made_up_id_finds_nobody(db):
    assert users.find_by_pk("not-a-key-of-any-model-0123456789") is None


@needs_first_last
def test_the_name_is_first_and_last_name(make_user):
    user = make_user(name="Ada King Lovelace")
    assert (user.first_name, user.last_name) == ("Ada", "King Lovelace")
    assert users.to_wire(user)["name"] == "Ada King Lovelace"


@needs_profile
def test_fields_the_model_lacks_are_stored_in_the_profile(make_user):
    user = make_user(image="https://example.com/ada.png", email_verified=True)
    profile = AuthProfile.objects.get(user=user)
    assert profile.email_verified is True
    assert profile.image == "https://example.com/ada.png"


@needs_profile
def test_a_user_from_before_authservice_gets_a_profile_on_first_use(db):
    model = get_user_model()
    user = model(**{users.email_field(): "old@example.com"})
    if model.USERNAME_FIELD != users.email_field():
        setattr(user, model.USERNAME_FIELD, "old")
    user.set_password(PASSWORD)
    user.save()
    assert users.to_wire(users.find_by_pk(user.pk))["emailVerified"] is False
    assert AuthProfile.objects.filter(user=user).exists()


@uses_profile_name
def test_a_model_without_name_fields_keeps_the_name_in_the_profile(make_user):
    user = make_user(name="Ada")
    assert AuthProfile.objects.get(user=user).name == "Ada"


@needs_username
def test_a_new_user_gets_the_email_as_username(make_user):
    user = make_user(email="ada@example.com")
    assert user.get_username() == "ada@example.com"


@needs_username
def test_a_taken_username_gets_a_unique_variant(make_user):
    model = get_user_model()
    squatter = model(**{model.USERNAME_FIELD: "ada@example.com", users.email_field(): "other@example.com"})
    squatter.save()
    user = make_user(email="ada@example.com")
    assert user.get_username().startswith("ada-")
    assert user.get_username() != squatter.get_username()


@needs_username
def test_the_adapter_decides_the_username(make_user, monkeypatch):
    monkeypatch.setattr(type(get_adapter()), "populate_username",
                        lambda self, user: setattr(user, type(user).USERNAME_FIELD, "chosen"))
    assert make_user().get_username() == "chosen"


# --- the mapping under the other models (subprocesses) ----------------------------------------------
@pytest.mark.parametrize("settings_module", ["tests.settings_auth_user", "tests.settings_email_user"])
def test_the_mapping_holds_under(settings_module):
    if os.environ.get("DJANGO_SETTINGS_MODULE") == settings_module:
        pytest.skip("this run is that one")
    result = run_pytest(settings_module, "tests/test_user_models.py", "-k", "not holds_under and not adopts")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


# --- layouts of models we do not run under ------------------------------------------------------------
def test_auth_users_layout():
    where = users.layout(DjangoUser)
    assert (where.email, where.name, where.created, where.updated) == ("email", "first_last", "date_joined", None)
    assert not where.verified_in_model and not where.image_in_model and where.needs_profile


# --- the user-model checks -------------------------------------------------------------------------------
def run_check(monkeypatch, model):
    monkeypatch.setattr(user_checks, "get_user_model", lambda: model)
    return {problem.id: problem for problem in user_checks.check_user_model()}


@isolate_apps("authservice")
def test_a_model_without_an_email_field_is_E020(monkeypatch):
    class NoEmail(AbstractBaseUser):
        handle = models.CharField(max_length=40, unique=True)
        USERNAME_FIELD = "handle"
        Meta = type("Meta", (), {"app_label": "authservice"})

    problems = run_check(monkeypatch, NoEmail)
    assert set(problems) == {"authservice.E020"}
    assert "EMAIL_FIELD" in problems["authservice.E020"].hint


@isolate_apps("authservice")
def test_an_email_field_that_is_not_text_is_E021(monkeypatch):
    class NumberEmail(AbstractBaseUser):
        email = models.IntegerField(unique=True)
        USERNAME_FIELD = "email"
        Meta = type("Meta", (), {"app_label": "authservice"})

    assert set(run_check(monkeypatch, NumberEmail)) == {"authservice.E021"}


@isolate_apps("authservice")
def test_a_username_we_cannot_fill_is_E022_and_a_shared_email_W020(monkeypatch):
    class Numbered(AbstractBaseUser):
        number = models.IntegerField(unique=True)
        email = models.EmailField()
        USERNAME_FIELD = "number"
        Meta = type("Meta", (), {"app_label": "authservice"})

    assert set(run_check(monkeypatch, Numbered)) == {"authservice.E022", "authservice.W020"}


def test_auth_user_passes_the_checks(monkeypatch):
    assert run_check(monkeypatch, DjangoUser) == {}


# --- adopting authservice in a project with migrated auth.User users -----------------------------------
SETTINGS = """
from pathlib import Path
SECRET_KEY = "adoption-test-" + "x" * 40
DEBUG = False
ALLOWED_HOSTS = ["testserver"]
USE_TZ = True
DATABASES = {{"default": {{"ENGINE": "django.db.backends.sqlite3", "NAME": {db!r}}}}}
INSTALLED_APPS = ["django.contrib.admin", "django.contrib.auth", "django.contrib.contenttypes",
                  "django.contrib.sessions", "django.contrib.messages"] + {extra_apps!r}
MIDDLEWARE = ["django.contrib.sessions.middleware.SessionMiddleware",
              "django.contrib.auth.middleware.AuthenticationMiddleware",
              "django.contrib.messages.middleware.MessageMiddleware"]
TEMPLATES = [{{"BACKEND": "django.template.backends.django.DjangoTemplates", "APP_DIRS": True,
              "OPTIONS": {{"context_processors": ["django.contrib.auth.context_processors.auth",
                                                  "django.contrib.messages.context_processors.messages"]}}}}]
ROOT_URLCONF = {urls!r}
PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
AUTHSERVICE = {{"base_url": "http://testserver"}}
"""
URLS_BEFORE = "from django.contrib import admin\nfrom django.urls import path\nurlpatterns = [path('admin/', admin.site.urls)]\n"
URLS_AFTER = URLS_BEFORE.replace("import path", "import include, path") + \
    "urlpatterns.append(path('', include('authservice.urls')))\n"
CREATE_USER = """
from django.contrib.auth.models import User
User.objects.create_user("ada", "Ada@Example.com", "old password 123", first_name="Ada", last_name="Lovelace")
print(User.objects.get().password.split("$")[0])
"""
SIGN_IN = """
from authservice import auth
result = auth.api.sign_in_email(body={"email": "ada@example.com", "password": "old password 123"})
print(result["user"]["id"], result["user"]["name"], bool(result["token"]))
"""


def _django(tmp_path, settings_name, *args, stdin=None):
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}", "DJANGO_SETTINGS_MODULE": settings_name}
    result = subprocess.run([sys.executable, "-m", "django", *args], cwd=tmp_path, env=env, input=stdin,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""


def test_a_project_with_migrated_auth_users_adopts_authservice(tmp_path):
    db = str(tmp_path / "site.sqlite3")
    (tmp_path / "urls_before.py").write_text(URLS_BEFORE)
    (tmp_path / "urls_after.py").write_text(URLS_AFTER)
    (tmp_path / "site_before.py").write_text(SETTINGS.format(db=db, extra_apps=[], urls="urls_before"))
    (tmp_path / "site_after.py").write_text(SETTINGS.format(
        db=db, extra_apps=["rest_framework", "authservice"], urls="urls_after"))
    _django(tmp_path, "site_before", "migrate", "--noinput")
    assert _django(tmp_path, "site_before", "shell", stdin=CREATE_USER) == "pbkdf2_sha256"

    # No change of AUTH_USER_MODEL: admin.0001 stays applied, authservice's tables join it.
    _django(tmp_path, "site_after", "migrate", "--noinput")
    assert _django(tmp_path, "site_after", "shell", stdin=SIGN_IN).split() == ["1", "Ada", "Lovelace", "True"]
