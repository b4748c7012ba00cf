"""The Node.js peers in tests/js: where their packages live and the ``node`` binary to run them."""

import os
import shutil
from pathlib import Path

import pytest

JS = Path(__file__).resolve().parents[1] / "js"


def node_or_skip(package):
    """The node binary, with ``package`` installed in tests/js. Without them a test skips locally and
    fails in CI (``CI`` set), where tests/install_peers.sh must have installed them."""
    node = shutil.which("node")
    missing = None
    if node is None:
        missing = "Node.js is not installed"
    elif not (JS / "node_modules" / package).is_dir():
        missing = f"{package} is not installed in tests/js (run `npm ci --prefix tests/js`)"
    if missing:
        if os.environ.get("CI"):
            pytest.fail(missing)
        pytest.skip(missing)
    return node
