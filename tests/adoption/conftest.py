"""The built distributions, shared by the adoption tests: CI's wheel stage builds them once into
``dist/`` and passes ``AUTHSERVICE_DIST=dist``; without it they are built here, once per run."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Slow (a build, a virtualenv, a pip install): only in CI's wheel stage, or when asked for.
ADOPTION = pytest.mark.skipif(os.environ.get("AUTHSERVICE_ADOPTION_TEST") != "1",
                              reason="slow; set AUTHSERVICE_ADOPTION_TEST=1 (CI's wheel stage does)")


@pytest.fixture(scope="session")
def dist(tmp_path_factory):
    """The directory holding ``django_authservice-*.whl`` and ``django_authservice-*.tar.gz``."""
    given = os.environ.get("AUTHSERVICE_DIST")
    if given:
        return Path(given).resolve()
    directory = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "build", "--outdir", str(directory), str(ROOT)],
                   check=True, capture_output=True, timeout=600)
    return directory


@pytest.fixture(scope="session")
def wheel(dist):
    return next(dist.glob("django_authservice-*.whl"))


@pytest.fixture(scope="session")
def sdist(dist):
    return next(dist.glob("django_authservice-*.tar.gz"))
