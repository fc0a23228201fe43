"""GET /api/ping/{name}: the same request and answer as TouchStream, without a blob input.

The benchmark's baseline: what an HTTP invocation costs when no blob is bound.
"""

import json

import azure.functions as func


def main(req: func.HttpRequest) -> func.HttpResponse:
    body = {"name": req.route_params.get("name")}
    return func.HttpResponse(json.dumps(body), status_code=200, mimetype="application/json")
