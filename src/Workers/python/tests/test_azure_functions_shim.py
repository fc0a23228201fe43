"""Our azure.functions: the public API user code relies on, and stepping aside for the real library."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from conftest import WORKER_DIR


def test_import_azure_functions_gives_our_module(func):
    import azure.functions

    assert azure.functions is func
    assert func.__faascache_shim__
    for name in ("HttpRequest", "HttpResponse", "InputStream", "Out", "Context"):
        assert hasattr(func, name)


def test_http_request(func):
    req = func.HttpRequest(
        "get", "http://h/api/f?x=1", headers={"X-Thing": "v"}, params={"x": "1"}, route_params={"id": "2"},
        body=b'{"k": "v"}',
    )
    assert req.method == "GET"
    assert req.url == "http://h/api/f?x=1"
    assert req.headers["x-thing"] == req.headers["X-THING"] == "v" and "X-Thing" in req.headers
    assert req.params["x"] == "1" and req.route_params["id"] == "2"
    with pytest.raises(TypeError):
        req.params["y"] = "2"  # read-only like the real one
    assert req.get_body() == b'{"k": "v"}' and req.get_json() == {"k": "v"}
    with pytest.raises(ValueError):
        func.HttpRequest("POST", "u", body=b"not json").get_json()
    with pytest.raises(TypeError):
        func.HttpRequest("POST", "u")  # body is required, keyword-only


def test_http_response(func):
    r = func.HttpResponse()
    assert (r.status_code, r.mimetype, r.charset, r.get_body()) == (200, "text/plain", "utf-8", b"")
    r = func.HttpResponse("héllo", status_code=404, headers={"X-A": "1"}, mimetype="text/html", charset="latin-1")
    assert r.get_body() == "héllo".encode("latin-1") and r.status_code == 404
    assert r.headers["x-a"] == "1"
    r.headers["Content-Type"] = "text/csv"
    assert r.headers["content-type"] == "text/csv"
    assert func.HttpResponse(bytearray(b"ab")).get_body() == b"ab"
    with pytest.raises(TypeError, match="str, bytes, or bytearray"):
        func.HttpResponse(42)


def test_out_is_generic_with_set_and_get(func):
    alias = func.Out[bytes]
    assert alias.__origin__ is func.Out
    out = func.Out()
    out.set(b"x")
    assert out.get() == b"x"


def test_input_stream_and_context_are_abstract(func):
    # As in the real library: io's C base does not enforce abstract methods at construction, so check them.
    assert {"read", "name", "length", "uri"} <= func.InputStream.__abstractmethods__
    with pytest.raises(TypeError):
        func.Context()


def test_worker_context_implements_context(func):
    from faascache_worker.context import context_class

    ctx = context_class(func.Context)("inv-1", "Fn", "/app/Fn")
    assert isinstance(ctx, func.Context)
    assert (ctx.invocation_id, ctx.function_name, ctx.function_directory) == ("inv-1", "Fn", "/app/Fn")
    assert ctx.retry_context.retry_count == 0 and ctx.trace_context.trace_parent == ""


def test_the_real_library_wins_when_installed(tmp_path):
    fake = tmp_path / "site" / "azure" / "functions"
    (fake / "decorators").mkdir(parents=True)
    (fake / "__init__.py").write_text("REAL = True\n")
    (fake / "decorators" / "__init__.py").write_text("")
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(tmp_path / 'site')!r})
        sys.path.insert(0, {str(WORKER_DIR)!r})
        from faascache_worker import azure_functions
        assert azure_functions.ensure_available() == "real"
        assert str(azure_functions.SHIM_DIR) not in sys.path
        import azure.functions
        assert azure.functions.REAL
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_the_shim_is_used_when_nothing_else_is_there():
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(WORKER_DIR)!r})
        from faascache_worker import azure_functions
        assert azure_functions.ensure_available() == "shim"
        import azure.functions as func
        assert func.__faascache_shim__
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr


def test_a_real_library_without_the_v2_decorators_gives_way_to_ours(tmp_path):
    fake = tmp_path / "site" / "azure" / "functions"  # azure-functions < 1.11: no decorators package
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("REAL = True\n")
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(tmp_path / 'site')!r})
        sys.path.insert(0, {str(WORKER_DIR)!r})
        from faascache_worker import azure_functions
        assert azure_functions.ensure_available() == "shim"
        import azure.functions as func
        assert func.__faascache_shim__ and not hasattr(func, "REAL")
        assert func.FunctionApp
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
    assert "has no v2 decorators" in out.stderr and "using FaaSCache's own" in out.stderr
