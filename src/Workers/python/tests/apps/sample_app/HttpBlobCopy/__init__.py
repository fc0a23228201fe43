import json
import logging

import azure.functions as func

from . import transform


def main(req: func.HttpRequest, inputblob: func.InputStream, outputblob: func.Out[bytes]) -> func.HttpResponse:
    data = inputblob.read()
    suffix = req.get_json().get("suffix", "")
    logging.info("HttpBlobCopy read %d bytes", len(data))
    outputblob.set(transform.shout(data) + suffix.encode())
    body = {"read": len(data), "name": req.params.get("name"), "stream": isinstance(inputblob, func.InputStream)}
    return func.HttpResponse(json.dumps(body), status_code=201, mimetype="application/json")
