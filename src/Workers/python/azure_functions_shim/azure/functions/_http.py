"""HTTP request and response objects of the HTTP trigger and output binding."""

from __future__ import annotations

import json
import types
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any


class _CaseInsensitiveDict(MutableMapping[str, str]):
    """Header names compare without case, as HTTP says; iteration yields lower-case names."""

    def __init__(self, data: Mapping[str, str] | None = None) -> None:
        self._data: dict[str, str] = {}
        for key, value in (data or {}).items():
            self[key] = value

    def __getitem__(self, key: str) -> str:
        return self._data[key.lower()]

    def __setitem__(self, key: str, value: str) -> None:
        self._data[key.lower()] = value

    def __delitem__(self, key: str) -> None:
        del self._data[key.lower()]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key.lower() in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._data!r})"


class HttpRequestHeaders(_CaseInsensitiveDict):
    """Request headers (case-insensitive)."""


class HttpResponseHeaders(_CaseInsensitiveDict):
    """Response headers (case-insensitive)."""


class HttpRequest:
    """An HTTP request handed to an HTTP-triggered function."""

    def __init__(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, str] | None = None,
        route_params: Mapping[str, str] | None = None,
        body: bytes,
    ) -> None:
        self.__method = method.upper() if method else method
        self.__url = url
        self.__headers = HttpRequestHeaders(headers or {})
        self.__params = types.MappingProxyType(dict(params or {}))
        self.__route_params = types.MappingProxyType(dict(route_params or {}))
        self.__body = bytes(body) if not isinstance(body, bytes) else body

    @property
    def method(self) -> str:
        return self.__method

    @property
    def url(self) -> str:
        return self.__url

    @property
    def headers(self) -> HttpRequestHeaders:
        return self.__headers

    @property
    def params(self) -> Mapping[str, str]:
        """Query-string parameters."""
        return self.__params

    @property
    def route_params(self) -> Mapping[str, str]:
        """Parameters of the function's route template."""
        return self.__route_params

    def get_body(self) -> bytes:
        return self.__body

    def get_json(self) -> Any:
        """The body parsed as JSON; raises ValueError when it is not JSON."""
        return json.loads(self.__body.decode("utf-8"))

    def __repr__(self) -> str:
        return f"<HttpRequest {self.__method} {self.__url}>"


class HttpResponse:
    """An HTTP response returned by (or set on an output binding of) a function."""

    def __init__(
        self,
        body: str | bytes | bytearray | None = None,
        *,
        status_code: int | None = None,
        headers: Mapping[str, str] | None = None,
        mimetype: str | None = None,
        charset: str | None = None,
    ) -> None:
        self.__status_code = 200 if status_code is None else int(status_code)
        self.__mimetype = "text/plain" if mimetype is None else mimetype
        self.__charset = "utf-8" if charset is None else charset
        self.__headers = HttpResponseHeaders(headers or {})
        self.__body = b""
        if body is not None:
            self.__set_body(body)

    def __set_body(self, body: str | bytes | bytearray) -> None:
        if isinstance(body, str):
            body = body.encode(self.__charset)
        if not isinstance(body, (bytes, bytearray)):
            raise TypeError(f"response is expected to be either of str, bytes, or bytearray, got {type(body).__name__}")
        self.__body = bytes(body)

    @property
    def status_code(self) -> int:
        return self.__status_code

    @property
    def mimetype(self) -> str:
        return self.__mimetype

    @property
    def charset(self) -> str:
        return self.__charset

    @property
    def headers(self) -> HttpResponseHeaders:
        return self.__headers

    def get_body(self) -> bytes:
        return self.__body

    def __repr__(self) -> str:
        return f"<HttpResponse {self.__status_code} {self.__mimetype} {len(self.__body)} bytes>"
