"""``python -m build`` makes a wheel and an sdist that carry everything a project needs at run time:
templates, migrations, static files and the ``py.typed`` marker (issue 13, section 6)."""

import tarfile
import zipfile

import pytest

from tests.adoption.conftest import ADOPTION, ROOT

pytestmark = ADOPTION

PACKAGES = ("authservice", "sso")


def shipped_files():
    """Every file of the packages that is not Python bytecode, relative to the repository."""
    return sorted(str(path.relative_to(ROOT)) for package in PACKAGES for path in (ROOT / package).rglob("*")
                  if path.is_file() and "__pycache__" not in path.parts)


def wheel_names(wheel):
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def sdist_names(sdist):
    with tarfile.open(sdist) as archive:
        # "django_authservice-0.1.0/authservice/..." -> "authservice/..."
        return {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}


@pytest.mark.parametrize("kind", ["py.typed", "templates/", "migrations/", "static/"])
def test_the_wheel_carries_every_file_of_the_packages(wheel, kind):
    expected = [name for name in shipped_files() if kind in name]
    assert set(expected) <= wheel_names(wheel)


@pytest.mark.parametrize("kind", ["py.typed", "templates/", "migrations/", "static/"])
def test_the_sdist_carries_every_file_of_the_packages(sdist, kind):
    expected = [name for name in shipped_files() if kind in name]
    assert set(expected) <= sdist_names(sdist)


def test_the_markers_templates_and_migrations_exist_to_be_carried():
    files = shipped_files()
    assert {"authservice/py.typed", "sso/py.typed", "authservice/migrations/0001_initial.py"} <= set(files)
    assert any(name.startswith("authservice/templates/authservice/email/") for name in files)


def test_both_carry_the_license(wheel, sdist):
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in wheel_names(wheel))
    assert "LICENSE" in sdist_names(sdist)


def test_the_sdist_leaves_the_test_suite_in_the_repository(sdist):
    assert not any(name.startswith("tests/") for name in sdist_names(sdist))
