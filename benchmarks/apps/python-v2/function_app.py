"""The benchmark app of benchmarks/apps/python in the Python v2 programming model: Ping, ReadAll and TouchStream
with the same routes, blob paths and answers, declared in one file (worker indexing).

- Ping, GET /api/ping/{name}: the same request and answer as TouchStream without a blob input (the baseline).
- ReadAll, GET /api/read/{name}: `InputStream.read()` of the whole blob bench/{name} (one copy on any worker),
  then its length and first and last byte.
- TouchStream, GET /api/stream/{name}: `read(1)`, `seek(-1, io.SEEK_END)`, `read(1)` and `blob.length`: nothing
  else of the blob is read, so on the FaaSCache worker (a view of the cachelet's map) no byte is copied.
"""

import io
import json

import azure.functions as func

STORAGE = "AzureWebJobsStorage"

app = func.FunctionApp()


def _not_found() -> func.HttpResponse:
    return func.HttpResponse(json.dumps({"error": "no such blob"}), status_code=404, mimetype="application/json")


@app.function_name("Ping")
@app.route(route="ping/{name}", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
def ping(req: func.HttpRequest) -> func.HttpResponse:
    body = {"name": req.route_params.get("name")}
    return func.HttpResponse(json.dumps(body), status_code=200, mimetype="application/json")


@app.function_name("ReadAll")
@app.route(route="read/{name}", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
@app.blob_input(arg_name="blob", path="bench/{name}", connection=STORAGE, data_type=func.DataType.BINARY)
def read_all(req: func.HttpRequest, blob: func.InputStream) -> func.HttpResponse:
    if blob is None:
        return _not_found()
    data = blob.read()
    body = {"length": len(data), "first": data[0] if data else None, "last": data[-1] if data else None}
    return func.HttpResponse(json.dumps(body), status_code=200, mimetype="application/json")


@app.function_name("TouchStream")
@app.route(route="stream/{name}", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
@app.blob_input(arg_name="blob", path="bench/{name}", connection=STORAGE, data_type=func.DataType.BINARY)
def touch_stream(req: func.HttpRequest, blob: func.InputStream) -> func.HttpResponse:
    if blob is None:
        return _not_found()
    first = blob.read(1)
    blob.seek(-1, io.SEEK_END)
    last = blob.read(1)
    body = {"length": blob.length, "first": first[0] if first else None, "last": last[0] if last else None}
    return func.HttpResponse(json.dumps(body), status_code=200, mimetype="application/json")
