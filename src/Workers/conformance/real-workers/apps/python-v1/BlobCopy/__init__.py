"""Copies its blob input upper-cased to its blob output; answers 201 with the input's length."""

import json

import azure.functions as func


def main(req: func.HttpRequest, inputblob: bytes, outputblob: func.Out[bytes]) -> func.HttpResponse:
    outputblob.set(inputblob.upper())
    return func.HttpResponse(json.dumps({"read": len(inputblob)}), status_code=201, mimetype="application/json")
