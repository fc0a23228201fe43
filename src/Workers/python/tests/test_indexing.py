"""Worker indexing of v2 apps (faascache_worker.indexing): what each function is described as, and every way an
app can fail to index, with the real worker's words where it has them."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_host import APP, APP_V2
from indexing_reference import COPY_BLOB_RAW_BINDINGS, FUNCTION_IDS, ON_BLOB_RAW_BINDINGS

from faascache_worker import indexing, loader
from faascache_worker.indexing import IndexingError, InvalidFileNameError, RetryOptions


@pytest.fixture(autouse=True)
def forget_app_modules(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Indexing imports function_app.py by its stem with the app folder first on sys.path: undo both afterwards."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delenv(indexing.SCRIPT_SETTING, raising=False)
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        file = getattr(sys.modules[name], "__file__", None) or ""
        if file.startswith((str(APP_V2), str(tmp_path))):
            del sys.modules[name]


def write_app(folder: Path, code: str, files: dict[str, str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "function_app.py").write_text(textwrap.dedent(code))
    for name, text in (files or {}).items():
        (folder / name).write_text(textwrap.dedent(text))
    return folder


def test_the_test_app_is_described_as_the_real_worker_describes_it():
    functions = {fn.name: fn for fn in indexing.index(str(APP_V2))}
    assert sorted(functions) == ["Hello", "Tick", "copy_blob", "on_blob"]
    for name, fn in functions.items():
        assert fn.function_id == FUNCTION_IDS[name]
        assert (fn.directory, fn.script_file, fn.entry_point) == (str(APP_V2), "function_app.py", name)
        assert fn.properties == {"worker_indexed": "True"}
        assert fn.loaded.metadata.function_id == fn.function_id
    copy = functions["copy_blob"]
    assert copy.raw_bindings == COPY_BLOB_RAW_BINDINGS
    assert functions["on_blob"].raw_bindings == ON_BLOB_RAW_BINDINGS
    assert copy.bindings["src"] == loader.BindingSpec("src", "blob", "in", "binary")
    assert copy.bindings["dst"] == loader.BindingSpec("dst", "blob", "out", "undefined")
    assert copy.bindings["$return"] == loader.BindingSpec("$return", "http", "out", "undefined")
    assert {p.name: p.kind for p in copy.loaded.params} == {"req": "http", "src": "stream", "dst": "out"}
    assert copy.retry is None and not copy.loaded.is_async and functions["on_blob"].loaded.is_async
    tick = functions["Tick"]
    assert tick.retry == RetryOptions("fixed_delay", 2, delay_interval=5)
    assert [(p.name, p.kind) for p in tick.loaded.params] == [("timer", "timer")]
    assert tick.loaded.return_binding == loader.BindingSpec("$return", "blob", "out", "string")
    assert [(p.name, p.kind) for p in functions["Hello"].loaded.params] == [("req", "http"), ("context", "context")]


def test_no_script_means_a_function_json_app():
    assert indexing.index(str(APP)) is None


def test_an_app_without_functions_gives_an_empty_list(tmp_path):
    app = write_app(tmp_path / "empty", "import azure.functions as func\n\napp = func.FunctionApp()\n")
    assert indexing.index(str(app)) == []


def test_the_script_name_comes_from_the_environment_and_is_checked(tmp_path):
    app = tmp_path / "custom"
    app.mkdir()
    (app / "my_app.py").write_text(textwrap.dedent("""
        import azure.functions as func
        app = func.FunctionApp()

        @app.schedule(schedule="* * * * * *", arg_name="t")
        def every_second(t):
            pass
    """))
    assert indexing.index(str(app)) is None  # function_app.py is not there
    environ = {indexing.SCRIPT_SETTING: "my_app.py"}
    (fn,) = indexing.index(str(app), environ)
    assert (fn.name, fn.script_file) == ("every_second", "function_app.py")  # the library's script_file, as in Azure
    for bad in ("../function_app.py", "app.txt", "-x.py", "a b.py"):
        with pytest.raises(InvalidFileNameError, match=f"Invalid file name: {bad} .PYTHON_SCRIPT_FILE_NAME must match"):
            indexing.index(str(app), {indexing.SCRIPT_SETTING: bad})


def test_duplicate_function_names_are_refused(tmp_path):
    app = write_app(tmp_path / "dup", """
        import azure.functions as func
        app = func.FunctionApp()

        @app.route(route="a")
        def f(req):
            pass

        @app.function_name("f")
        @app.route(route="b")
        def g(req):
            pass
    """)
    with pytest.raises(ValueError, match="Function f does not have a unique function name"):
        indexing.index(str(app))


def test_an_import_error_names_the_script_and_keeps_its_cause(tmp_path):
    missing = write_app(tmp_path / "missing", "import azure.functions as func\nimport no_such_module_here\n")
    with pytest.raises(IndexingError) as raised:
        indexing.index(str(missing))
    assert str(raised.value) == (
        f"ModuleNotFoundError: No module named 'no_such_module_here' (while importing {missing / 'function_app.py'})"
    )
    assert isinstance(raised.value.cause, ModuleNotFoundError)


@pytest.mark.parametrize("code, error, message", [
    pytest.param("import azure.functions as func\n\nbp = func.Blueprint()\n", ValueError,
                 r"^Could not find top level function app instances in function_app.py.$", id="no app (the real worker's words)"),
    pytest.param("import azure.functions as func\n\na = func.FunctionApp()\nb = func.FunctionApp()\n", ValueError,
                 r"^More than one FunctionApp or other top level function app instances are defined.$",
                 id="two apps (the real worker's words)"),
    pytest.param("import azure.functions as func\napp = func.FunctionApp(\n", IndexingError,
                 r"^SyntaxError: .* \(.*/app/function_app.py, line 2\)$", id="a syntax error names the script"),
    pytest.param("raise RuntimeError('no config')\n", IndexingError,
                 r"^RuntimeError: no config \(while importing .*/app/function_app.py\)$",
                 id="raising at import names the script"),
])
def test_an_app_that_does_not_index_is_refused_saying_why(tmp_path, code, error, message):
    app = write_app(tmp_path / "app", code)
    with pytest.raises(error, match=message):
        indexing.index(str(app))


def test_a_parameter_without_a_binding_fails_the_indexing(tmp_path):
    app = write_app(tmp_path / "params", """
        import azure.functions as func
        app = func.FunctionApp()

        @app.route(route="a")
        def f(req, extra):
            pass
    """)
    with pytest.raises(loader.FunctionLoadError,
                       match="cannot load function 'f': the following parameters are declared in Python but not in its "
                             "decorators: extra"):
        indexing.index(str(app))


def test_a_blueprint_in_its_own_module_and_a_helper_import(tmp_path):
    app = write_app(tmp_path / "bp_app", """
        import azure.functions as func
        from bp_app_parts import bp

        app = func.FunctionApp(http_auth_level=func.AuthLevel.ANONYMOUS)
        app.register_functions(bp)
    """, {"bp_app_parts.py": """
        import azure.functions as func
        bp = func.Blueprint()

        @bp.route(route="hi")
        def hi(req: func.HttpRequest) -> func.HttpResponse:
            return func.HttpResponse("hi")
    """})
    (fn,) = indexing.index(str(app))
    assert fn.name == "hi" and '"authLevel": "ANONYMOUS"' in fn.raw_bindings[0]


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        (None, None),
        ({"strategy": "fixed_delay", "max_retry_count": "3", "delay_interval": "00:01:30"}, RetryOptions("fixed_delay", 3, 90)),
        ({"strategy": "exponential_backoff", "max_retry_count": "-1", "minimum_interval": "00:00:02",
          "maximum_interval": "01:00:00"}, RetryOptions("exponential_backoff", -1, None, 2, 3600)),
        ({"strategy": "linear", "max_retry_count": "3"}, "strategy 'linear' is not one of exponential_backoff, fixed_delay"),
        ({"strategy": "fixed_delay", "max_retry_count": "three", "delay_interval": "00:00:01"},
         "max_retry_count 'three' is not a whole number"),
        ({"strategy": "fixed_delay", "max_retry_count": "3"}, "strategy fixed_delay needs delay_interval"),
        ({"strategy": "exponential_backoff", "max_retry_count": "3", "minimum_interval": "00:00:01"},
         "strategy exponential_backoff needs minimum_interval and maximum_interval"),
        ({"strategy": "fixed_delay", "max_retry_count": "3", "delay_interval": "10s"},
         "delay_interval '10s' is not a duration \"HH:MM:SS\""),
    ],
)
def test_retry_options(settings, expected):
    if isinstance(expected, str):
        with pytest.raises(ValueError, match=f"function F: @retry {expected}"):
            indexing.retry_options("F", settings)
    else:
        assert indexing.retry_options("F", settings) == expected
