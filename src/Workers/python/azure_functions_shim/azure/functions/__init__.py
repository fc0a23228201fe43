"""A small `azure.functions`, written for FaaSCache's Python worker.

Same public names and behaviour as the real `azure-functions` library for what function.json-model
functions use: HttpRequest, HttpResponse, InputStream, Out and Context. The worker puts this package
on sys.path only when the real library cannot be imported, so an app that ships the real one gets it.
"""

from ._abc import Context, InputStream, Out
from ._http import HttpRequest, HttpRequestHeaders, HttpResponse, HttpResponseHeaders

__all__ = [
    "Context",
    "HttpRequest",
    "HttpRequestHeaders",
    "HttpResponse",
    "HttpResponseHeaders",
    "InputStream",
    "Out",
]

__version__ = "0+faascache"
__faascache_shim__ = True
