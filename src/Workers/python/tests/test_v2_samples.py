"""The v2 versions of the repository's Python apps (samples/amber-alert-v2, benchmarks/apps/python-v2) declare the
same functions, routes, blob paths and connections as their function.json originals, and answer the same."""

from __future__ import annotations

import json
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import WORKER_DIR

from faascache_worker import bindings, indexing, loader
from faascache_worker.input_stream import make_input_stream

ROOT = WORKER_DIR.parent.parent.parent
PAIRS = {
    "amber-alert": (ROOT / "samples" / "amber-alert", ROOT / "samples" / "amber-alert-v2"),
    "benchmarks": (ROOT / "benchmarks" / "apps" / "python", ROOT / "benchmarks" / "apps" / "python-v2"),
}


@pytest.fixture(autouse=True)
def forget_app_modules(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The v1 loader imports an app as the package __app__ (one app per process), indexing imports function_app.py
    by its stem: put another test's __app__ aside for this one, and forget this one's modules afterwards."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delenv(indexing.SCRIPT_SETTING, raising=False)
    for name in [n for n in sys.modules if n == loader.APP_PACKAGE or n.startswith(loader.APP_PACKAGE + ".")]:
        monkeypatch.delitem(sys.modules, name)
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        file = getattr(sys.modules[name], "__file__", None) or ""
        ours = any(file.startswith(str(folder)) for pair in PAIRS.values() for folder in pair)
        if ours or name == loader.APP_PACKAGE or name.startswith(loader.APP_PACKAGE + "."):
            del sys.modules[name]


def normalized(binding: dict[str, Any]) -> dict[str, Any]:
    """What a binding means, whatever the model's spelling: case of enums, default dataType and methods order."""
    keep = {k: v for k, v in binding.items() if k not in ("direction", "dataType", "authLevel", "methods", "name")}
    keep["direction"] = binding["direction"].lower()
    keep["dataType"] = binding.get("dataType", "undefined").lower()
    if "authLevel" in binding:
        keep["authLevel"] = binding["authLevel"].lower()
    if "methods" in binding:
        keep["methods"] = sorted(m.upper() for m in binding["methods"])
    return keep


def v1_functions(app: Path) -> dict[str, dict[str, dict[str, Any]]]:
    found = {}
    for spec in sorted(app.glob("*/function.json")):
        found[spec.parent.name] = {b["name"]: normalized(b) for b in json.loads(spec.read_text())["bindings"]}
    return found


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_the_v2_app_declares_what_the_function_json_app_does(pair):
    v1, v2 = PAIRS[pair]
    indexed = indexing.index(str(v2))
    assert indexed, f"{v2} has no functions"
    declared = {fn.name: {json.loads(raw)["name"]: normalized(json.loads(raw)) for raw in fn.raw_bindings} for fn in indexed}
    assert declared == v1_functions(v1)
    for name in ("host.json", "local.settings.json"):
        assert json.loads((v2 / name).read_text()) == json.loads((v1 / name).read_text()), name


def ppm(width: int, height: int) -> bytes:
    """A dark image with two bright shapes, like the sample's seeded camera images."""
    rows = [bytearray(bytes([20 + y % 7]) * (width * 3)) for y in range(height)]
    for x0, y0, w, h in ((8, 8, 16, 40), (40, 24, 40, 20)):
        for y in range(y0, y0 + h):
            rows[y][x0 * 3 : (x0 + w) * 3] = b"\xf0\xe0\xd0" * w
    return b"P6\n%d %d\n255\n" % (width, height) + b"".join(rows)


def model(size: int, seed: int) -> bytes:
    out = bytearray()
    while len(out) < size:
        out += zlib.crc32(bytes([seed, len(out) % 251])).to_bytes(4, "little")
    return bytes(out[:size])


class Runner:
    """Calls a loaded function as the worker does: streams over the bytes, Out boxes for outputs."""

    def __init__(self, func: Any) -> None:
        self.func = func

    def __call__(self, fn: loader.LoadedFunction, **inputs: Any) -> tuple[Any, dict[str, Any]]:
        args, outs = {}, {}
        for p in fn.params:
            if p.kind == loader.KIND_OUT:
                outs[p.name] = args[p.name] = bindings.out_class(self.func.Out)()
            elif p.kind == loader.KIND_STREAM and inputs[p.name] is not None:  # (bytes, blob name); None: no blob
                data, name = inputs[p.name]
                args[p.name] = make_input_stream(self.func.InputStream, data, name=name, length=len(data))
            else:
                args[p.name] = inputs[p.name]
        result = fn.func(**args)
        return result, {k: box.get() for k, box in outs.items()}


def load_both(pair: str, func: Any) -> tuple[dict[str, loader.LoadedFunction], dict[str, loader.LoadedFunction]]:
    v1, v2 = PAIRS[pair]
    old = {}
    for spec in sorted(v1.glob("*/function.json")):
        bindings_json = json.loads(spec.read_text())["bindings"]
        meta = loader.FunctionMetadata(
            function_id=spec.parent.name, name=spec.parent.name, directory=str(spec.parent),
            bindings={b["name"]: loader.BindingSpec(b["name"], b["type"], b["direction"], b.get("dataType", "undefined"))
                      for b in bindings_json},
        )
        old[meta.name] = loader.load_function(meta, str(v1))
    return old, {fn.name: fn.loaded for fn in indexing.index(str(v2))}


def without_timing(text: str | bytes) -> dict[str, Any]:
    value = json.loads(text)
    value.pop("computeMs")
    return value


def test_the_amber_alert_pipeline_answers_the_same_in_both_models(func):
    old, new = load_both("amber-alert", func)
    run = Runner(func)
    image, bounding_box_model = ppm(96, 64), model(200_000, 1)

    def request() -> Any:
        return func.HttpRequest("GET", "http://h/api/bounding-box/camera-1.ppm", route_params={"image": "camera-1.ppm"},
                                body=b"")

    answers, labelled = [], []
    for functions in (old, new):
        response, outs = run(functions["BoundingBox"], req=request(), picture=(image, None),
                             model=(bounding_box_model, None))
        assert response.status_code == 200
        answers.append(without_timing(response.get_body()))
        labelled.append(outs["labelled"])
    assert answers[0] == answers[1] and labelled[0] == labelled[1] and b"# amber box" in labelled[0]
    for stage, size in (("People", 150_000), ("Car", 50_000)):
        results = []
        for functions in (old, new):
            _none, outs = run(functions[stage], labelled=(labelled[0], "labelled/camera-1.ppm"),
                              model=(model(size, 2), None))
            results.append(without_timing(outs["result"]))
        assert results[0] == results[1] and results[0]["source"] == "labelled/camera-1.ppm"
    # A missing image: both answer 404 the same way.
    missing = [run(f["BoundingBox"], req=request(), picture=None, model=(bounding_box_model, None))[0] for f in (old, new)]
    assert [r.status_code for r in missing] == [404, 404] and missing[0].get_body() == missing[1].get_body()


def test_the_benchmark_functions_answer_the_same_in_both_models(func):
    old, new = load_both("benchmarks", func)
    run = Runner(func)
    blob = bytes(range(256)) * 40
    for name in ("Ping", "ReadAll", "TouchStream"):
        answers = []
        for functions in (old, new):
            req = func.HttpRequest("GET", "http://h/api/x/b1", route_params={"name": "b1"}, body=b"")
            inputs = {"req": req} if name == "Ping" else {"req": req, "blob": (blob, "bench/b1")}
            response, _outs = run(functions[name], **inputs)
            answers.append((response.status_code, json.loads(response.get_body())))
        assert answers[0] == answers[1], name
    assert answers[0][1] == {"length": len(blob), "first": 0, "last": 255}
