"""GET /api/stream/{name}: the length and the first and last byte of blob bench/{name}.

The blob arrives as a `func.InputStream` and is read the way a stream is: `read(1)` at the start, a
seek to the end, `read(1)` there. Nothing else of the blob is read, so on the FaaSCache worker (whose
InputStream is a view of the cachelet's shared memory) no byte of it is copied; on a stock worker the
host already sent all of it inside the gRPC message.
"""

import io
import json

import azure.functions as func


def main(req: func.HttpRequest, blob: func.InputStream) -> func.HttpResponse:
    if blob is None:
        return func.HttpResponse(json.dumps({"error": "no such blob"}), status_code=404, mimetype="application/json")
    first = blob.read(1)
    blob.seek(-1, io.SEEK_END)
    last = blob.read(1)
    body = {"length": blob.length, "first": first[0] if first else None, "last": last[0] if last else None}
    return func.HttpResponse(json.dumps(body), status_code=200, mimetype="application/json")
