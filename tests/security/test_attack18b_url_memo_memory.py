"""I6: paths a client makes up cost a resolution each, never memory (authservice/url_memo.py's promise).

The lean API handler remembers URL matches per path (``url_memo``, an LRU of ``SIZE`` = 512 paths). Its
docstring says made-up paths cost no memory because "a path that matches nothing (Resolver404) is not
remembered". But under the base path *every* path matches: authservice's catch-all
``^api/auth(?P<subpath>/.*)?$`` answers the router's JSON 404 itself. So each distinct made-up path
under ``/api/auth/`` is kept, twice (the cache key, and the match's ``subpath`` kwarg), until 511 other
paths push it out. An outside attacker sends 512 GETs of ~60 KiB paths (each request well under I6's
64 KiB; WSGI servers such as waitress or wsgiref accept such request lines) and the process keeps about
70 MB for good, replaced by the next ones, never freed: I6's "under 50 MB of memory" for requests of
that size, held across requests instead of released with them. The attack needs no account.

Fixed: the memo keeps only paths of at most ``url_memo.MAX_PATH`` characters; longer ones are resolved
each time, so the same requests leave next to nothing behind.
"""

import gc
import tracemalloc

import pytest
from django.core.handlers.wsgi import WSGIHandler

from authservice import url_memo, wsgi
from tests.conftest import BASE
from tests.security.test_attack18b_held import call

pytestmark = pytest.mark.django_db

PATH_LENGTH = 60_000  # each request stays under I6's 64 KiB


def test_made_up_paths_under_the_base_path_leave_no_memory_behind(db):
    lean = wsgi.application(WSGIHandler())
    url_memo._remembered.cache_clear()
    call(lean, "GET", BASE + "/get-session")  # everything lazily built on a first request
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for index in range(url_memo.SIZE):
            answer = call(lean, "GET", f"{BASE}/{index:06d}" + "a" * PATH_LENGTH)
            assert answer["status"].startswith("404")
        gc.collect()
        retained = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
        url_memo._remembered.cache_clear()
    assert retained < 10_000_000, f"{retained / 1e6:.1f} MB kept after the requests ended"
