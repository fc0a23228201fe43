"""Function loading: good scripts load; every bad one fails with the file and the reason."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from faascache_worker import loader
from faascache_worker.loader import BindingSpec, FunctionLoadError, FunctionMetadata

HTTP = {
    "req": BindingSpec("req", "httpTrigger", "in"),
    "$return": BindingSpec("$return", "http", "out"),
}


def make_function(app: Path, name: str, code: str, filename: str = "__init__.py") -> Path:
    folder = app / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / filename).write_text(textwrap.dedent(code))
    return folder


def meta(folder: Path, bindings=None, script_file: str = "", entry_point: str = "") -> FunctionMetadata:
    return FunctionMetadata(
        function_id=f"id-{folder.name}",
        name=folder.name,
        directory=str(folder),
        script_file=str(folder / script_file) if script_file else "",
        entry_point=entry_point,
        bindings=HTTP if bindings is None else bindings,
    )


@pytest.fixture
def app(tmp_path: Path) -> Path:
    return tmp_path / f"app_{tmp_path.name}"


def test_loads_a_good_function_with_relative_imports(app):
    folder = make_function(
        app,
        "Good",
        """
        import azure.functions as func
        from . import helper
        from ..shared import common

        def main(req: func.HttpRequest, inputblob: func.InputStream, outputblob: func.Out[bytes],
                 context: func.Context) -> func.HttpResponse:
            return func.HttpResponse(helper.VALUE + common.VALUE)
        """,
    )
    (folder / "helper.py").write_text("VALUE = 'h'\n")
    (app / "shared").mkdir()
    (app / "shared" / "common.py").write_text("VALUE = 'c'\n")
    bindings = {
        **HTTP,
        "inputblob": BindingSpec("inputblob", "blob", "in", "binary"),
        "outputblob": BindingSpec("outputblob", "blob", "out"),
    }
    fn = loader.load_function(meta(folder, bindings), str(app))
    kinds = {p.name: p.kind for p in fn.params}
    assert kinds == {"req": "http", "inputblob": "stream", "outputblob": "out", "context": "context"}
    assert [p.out_type for p in fn.params if p.kind == "out"] == [bytes]
    assert fn.return_binding is not None and not fn.is_async
    assert fn.func.__module__ == "__app__.Good"
    assert fn.func.__globals__["helper"].VALUE == "h"


def test_loads_a_named_script_and_entry_point_and_detects_async(app):
    folder = make_function(app, "Named", "async def handler(req):\n    return 'ok'\n", filename="handlers.py")
    fn = loader.load_function(meta(folder, script_file="handlers.py", entry_point="handler"), str(app))
    assert fn.is_async and fn.func.__name__ == "handler"
    assert fn.script_path.endswith("handlers.py")
    assert [p.kind for p in fn.params] == ["http"]  # unannotated HTTP trigger


def test_missing_script_names_the_file(app):
    folder = app / "Missing"
    folder.mkdir(parents=True)
    with pytest.raises(FunctionLoadError) as e:
        loader.load_function(meta(folder), str(app))
    msg = str(e.value)
    assert "cannot load function 'Missing'" in msg
    assert str(folder / "__init__.py") in msg and "does not exist" in msg


def test_syntax_error_names_file_and_line(app):
    folder = make_function(app, "Broken", "def main(req):\n    return (\n\nx = 1\n")
    with pytest.raises(FunctionLoadError) as e:
        loader.load_function(meta(folder), str(app))
    msg = str(e.value)
    assert "syntax error in" in msg and str(folder / "__init__.py") in msg and "line" in msg
    assert "SyntaxError" in e.value.details


def test_import_failure_names_the_exception(app):
    folder = make_function(app, "BadImport", "import module_that_is_not_there\n\ndef main(req):\n    pass\n")
    with pytest.raises(FunctionLoadError, match=r"importing .*__init__.py raised ModuleNotFoundError: No module named"):
        loader.load_function(meta(folder), str(app))


def test_missing_entry_point_says_what_to_define(app):
    folder = make_function(app, "NoMain", "def handler(req):\n    pass\n")
    with pytest.raises(FunctionLoadError, match=r"has no function 'main' \(function.json \"entryPoint\""):
        loader.load_function(meta(folder), str(app))
    with pytest.raises(FunctionLoadError, match="has no function 'run'"):
        loader.load_function(meta(folder, entry_point="run"), str(app))


def test_entry_point_that_is_not_callable(app):
    folder = make_function(app, "NotCallable", "main = 3\n")
    with pytest.raises(FunctionLoadError, match="'main' in .* is a int, not a function"):
        loader.load_function(meta(folder), str(app))


def test_parameters_and_bindings_must_match(app):
    folder = make_function(app, "Mismatch", "def main(req, extra):\n    pass\n")
    with pytest.raises(FunctionLoadError, match="declared in Python but not in function.json: extra"):
        loader.load_function(meta(folder), str(app))
    folder = make_function(app, "Mismatch2", "def main(req):\n    pass\n")
    bindings = {**HTTP, "blob": BindingSpec("blob", "blob", "in")}
    with pytest.raises(FunctionLoadError, match="declared in function.json but are not parameters of 'main': blob"):
        loader.load_function(meta(folder, bindings), str(app))


@pytest.mark.parametrize("signature, binding, message", [
    pytest.param("main(req, o: bytes)", BindingSpec("o", "blob", "out"), r"binding 'o' has direction \"out\".*func.Out\[...\]",
                 id="an output binding needs a func.Out annotation"),
    pytest.param("main(req, i: func.Out[bytes])", BindingSpec("i", "blob", "in"),
                 "annotated func.Out but binding 'i' has direction \"in\"", id="an input annotated func.Out is refused"),
    pytest.param("main(req, b: int)", BindingSpec("b", "blob", "in"), "blob binding 'b' cannot be passed as int",
                 id="a blob cannot be passed as int"),
])
def test_an_annotation_that_does_not_fit_its_binding_is_refused(app, signature, binding, message):
    folder = make_function(app, "Misfit", f"import azure.functions as func\ndef {signature}:\n    pass\n")
    with pytest.raises(FunctionLoadError, match=message):
        loader.load_function(meta(folder, {**HTTP, binding.name: binding}), str(app))


def test_annotations_as_strings_are_resolved(app):
    folder = make_function(
        app,
        "Future",
        """
        from __future__ import annotations
        import azure.functions as func
        def main(req: func.HttpRequest, b: bytes) -> func.HttpResponse:
            pass
        """,
    )
    bindings = {**HTTP, "b": BindingSpec("b", "blob", "in")}
    fn = loader.load_function(meta(folder, bindings), str(app))
    assert {p.name: p.kind for p in fn.params} == {"req": "http", "b": "bytes"}


def test_timer_triggers_take_a_timer_request(app):
    timer = {"t": BindingSpec("t", "timerTrigger", "in")}
    folder = make_function(app, "Timer", "import azure.functions as func\ndef main(t: func.TimerRequest):\n    pass\n")
    assert [p.kind for p in loader.load_function(meta(folder, timer), str(app)).params] == ["timer"]
    folder = make_function(app, "TimerBare", "def main(t):\n    pass\n")
    assert [p.kind for p in loader.load_function(meta(folder, timer), str(app)).params] == ["timer"]
    folder = make_function(app, "TimerHttp", "import azure.functions as func\ndef main(t: func.HttpRequest):\n    pass\n")
    with pytest.raises(FunctionLoadError, match="timer trigger 't' is annotated HttpRequest; annotate it func.TimerRequest"):
        loader.load_function(meta(folder, timer), str(app))
    folder = make_function(app, "NotTimer", "import azure.functions as func\ndef main(req, b: func.TimerRequest):\n    pass\n")
    with pytest.raises(FunctionLoadError,
                       match="'b' is annotated func.TimerRequest but binding 'b' is a queue, not a timerTrigger"):
        loader.load_function(meta(folder, {**HTTP, "b": BindingSpec("b", "queue", "in")}), str(app))
