"""The v2 app of the worker-indexing fixtures: worker-indexing.md §2's reference app. copy_blob copies its blob
input upper-cased to its blob output and answers 201 with the input's length; on_blob (a Blueprint's blob trigger)
logs the blob's name and length."""

import json
import logging

import azure.functions as func

app = func.FunctionApp()


@app.route(route="copy/{name}", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
@app.blob_input(arg_name="src", path="in/{name}", connection="AzureWebJobsStorage", data_type=func.DataType.BINARY)
@app.blob_output(arg_name="dst", path="out/{name}", connection="AzureWebJobsStorage")
def copy_blob(req: func.HttpRequest, src: bytes, dst: func.Out[bytes]) -> func.HttpResponse:
    dst.set(src.upper())
    return func.HttpResponse(json.dumps({"read": len(src)}), status_code=201, mimetype="application/json")


bp = func.Blueprint()


@bp.blob_trigger(arg_name="myblob", path="in/{name}", connection="AzureWebJobsStorage")
def on_blob(myblob: func.InputStream) -> None:
    logging.info("on_blob %s: %d bytes", myblob.name, len(myblob.read()))


app.register_functions(bp)
