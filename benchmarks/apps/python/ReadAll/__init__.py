"""GET /api/read/{name}: the length and the first and last byte of blob bench/{name}.

The most common way to use a blob input in Python: `InputStream.read()` the whole blob into `bytes`
(one copy of all of it, on any worker), then look at the bytes.
"""

import json

import azure.functions as func


def main(req: func.HttpRequest, blob: func.InputStream) -> func.HttpResponse:
    if blob is None:
        return func.HttpResponse(json.dumps({"error": "no such blob"}), status_code=404, mimetype="application/json")
    data = blob.read()
    body = {"length": len(data), "first": data[0] if data else None, "last": data[-1] if data else None}
    return func.HttpResponse(json.dumps(body), status_code=200, mimetype="application/json")
