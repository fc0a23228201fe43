"""Makes `import azure.functions as func` work in user code: the real library when importable, else ours.

Ours (azure_functions_shim/) is appended to the end of sys.path, so a copy the app ships in
.python_packages (put in front of sys.path at worker init) still wins.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType

from . import WORKER_DIR

SHIM_DIR = WORKER_DIR / "azure_functions_shim"


def _findable() -> bool:
    try:
        return importlib.util.find_spec("azure.functions") is not None
    except (ImportError, ValueError):  # no `azure` package at all
        return False


def ensure_available() -> str:
    """Returns "real" or "shim": which azure.functions user code will import."""
    if "azure.functions" in sys.modules:
        return "shim" if is_shim(sys.modules["azure.functions"]) else "real"
    if _findable():
        return "real"
    if str(SHIM_DIR) not in sys.path:
        sys.path.append(str(SHIM_DIR))
    importlib.invalidate_caches()
    azure = sys.modules.get("azure")
    if not _findable() and azure is not None and isinstance(getattr(azure, "__path__", None), list):
        azure.__path__.append(str(SHIM_DIR / "azure"))  # a regular `azure` package imported earlier
    return "shim"


def module() -> ModuleType:
    """The azure.functions module user code sees."""
    ensure_available()
    return importlib.import_module("azure.functions")


def is_shim(mod: ModuleType) -> bool:
    return bool(getattr(mod, "__faascache_shim__", False))
