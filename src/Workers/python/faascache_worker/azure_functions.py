"""Makes `import azure.functions as func` work in user code: the real library when importable (and new enough to
have the v2 model's decorators), else ours.

Ours (azure_functions_shim/) is appended to the end of sys.path, so a copy the app ships in
.python_packages (put in front of sys.path at worker init) still wins. A real library without
`azure.functions.decorators` (older than 1.11) cannot run v2 apps; ours runs both models, so it goes in front.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import sys
from types import ModuleType

from . import WORKER_DIR

SHIM_DIR = WORKER_DIR / "azure_functions_shim"

log = logging.getLogger("faascache_worker")


def _spec() -> importlib.machinery.ModuleSpec | None:
    try:
        return importlib.util.find_spec("azure.functions")
    except (ImportError, ValueError):  # no `azure` package at all
        return None


def _has_decorators(spec: importlib.machinery.ModuleSpec) -> bool:
    """Whether that azure.functions has the v2 decorators, found without importing it."""
    return any(os.path.isfile(os.path.join(folder, "decorators", "__init__.py"))
               for folder in spec.submodule_search_locations or [])


def ensure_available() -> str:
    """Returns "real" or "shim": which azure.functions user code will import."""
    if "azure.functions" in sys.modules:
        return "shim" if is_shim(sys.modules["azure.functions"]) else "real"
    spec = _spec()
    if spec is not None and _has_decorators(spec):
        return "real"
    if spec is not None:
        log.warning("the azure.functions at %s has no v2 decorators (azure-functions < 1.11); using FaaSCache's own",
                    ", ".join(spec.submodule_search_locations or [str(spec.origin)]))
        if str(SHIM_DIR) in sys.path:
            sys.path.remove(str(SHIM_DIR))
        sys.path.insert(0, str(SHIM_DIR))
    elif str(SHIM_DIR) not in sys.path:
        sys.path.append(str(SHIM_DIR))
    importlib.invalidate_caches()
    azure = sys.modules.get("azure")
    spec = _spec()
    if (spec is None or not _has_decorators(spec)) and azure is not None and isinstance(getattr(azure, "__path__", None), list):
        azure.__path__.insert(0, str(SHIM_DIR / "azure"))  # a regular `azure` package imported earlier
    return "shim"


def module() -> ModuleType:
    """The azure.functions module user code sees."""
    ensure_available()
    return importlib.import_module("azure.functions")


def is_shim(mod: ModuleType) -> bool:
    return bool(getattr(mod, "__faascache_shim__", False))
