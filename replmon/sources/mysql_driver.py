"""pymysql, without importing cryptography until a login needs it.

pymysql imports cryptography's RSA, hashes and padding when it is imported
(``pymysql._auth``), for one case only: caching_sha2_password's (or sha256_password's)
full login over plain TCP, without TLS, where the password goes RSA-encrypted with the
server's public key. That import costs ~7 MB of RSS in every process that reads MySQL
(docs/benchmarks.md#bench_memorypy-memory), most of which never logs in that way.
``import_pymysql`` imports pymysql with cryptography's modules held back and gives
``pymysql._auth`` stand-ins that import them when that login first uses them.
``replmon.sources`` calls it before any source imports pymysql; a process that imported
pymysql before (the lab, a test) keeps it as it is.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import Any

HELD_BACK = "cryptography.hazmat.backends"
"""pymysql._auth's first import from cryptography: absent, it does without it."""
LATER = {"hashes": "cryptography.hazmat.primitives.hashes",
         "serialization": "cryptography.hazmat.primitives.serialization",
         "padding": "cryptography.hazmat.primitives.asymmetric.padding"}
"""pymysql._auth's names for cryptography's modules, and the modules."""


class Later:
    """A module imported when one of its names is first read."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self.name), attr)


def default_backend() -> Any:
    """cryptography's ``default_backend()``, imported when first called."""
    return importlib.import_module(HELD_BACK).default_backend()


def import_pymysql() -> None:
    """Import pymysql (once) with cryptography left for ``sha2_rsa_encrypt`` to import."""
    if "pymysql._auth" in sys.modules or HELD_BACK in sys.modules:
        return
    sys.modules[HELD_BACK] = None  # type: ignore[assignment]  # import fails: ImportError
    try:
        import pymysql._auth as auth
    finally:
        if sys.modules.get(HELD_BACK, ...) is None:
            del sys.modules[HELD_BACK]
    if getattr(auth, "_have_cryptography", True) or not importlib.util.find_spec("cryptography"):
        return  # (a pymysql that did not need it, or no cryptography to import later)
    for name, module in LATER.items():
        setattr(auth, name, Later(module))
    setattr(auth, "default_backend", default_backend)  # noqa: B010 (not in its stubs)
    setattr(auth, "_have_cryptography", True)  # noqa: B010
