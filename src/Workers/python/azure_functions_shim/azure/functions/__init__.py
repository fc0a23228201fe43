"""A small `azure.functions`, written for FaaSCache's Python worker.

Same public names and behaviour as the real `azure-functions` library for what function.json-model
functions use (HttpRequest, HttpResponse, InputStream, Out, Context) and for the v2 programming model's
decorators (FunctionApp, Blueprint, route, blob_trigger/input/output, queue_trigger/output, schedule, function_name,
retry) with TimerRequest and QueueMessage. The worker puts this package on sys.path only when the real library
cannot be imported, so an app that ships the real one gets it.
"""

from ._abc import Context, InputStream, Out, TimerRequest
from ._http import HttpRequest, HttpRequestHeaders, HttpResponse, HttpResponseHeaders
from .queue import QueueMessage
from . import decorators
from .decorators import *  # noqa: F401,F403 (the v2 model's decorator API: what decorators.__all__ lists)

__all__ = [
    "Context",
    "HttpRequest",
    "HttpRequestHeaders",
    "HttpResponse",
    "HttpResponseHeaders",
    "InputStream",
    "Out",
    "QueueMessage",
    "TimerRequest",
]
__all__ += decorators.__all__

__version__ = "0+faascache"
__faascache_shim__ = True
