"""The worker-indexing example app of shared/reference/worker-indexing.md §2 in the Python v2 model (containers renamed
to names a storage account accepts): copy_blob copies images/{name} upper-cased to thumbs/{name}; on_blob is
blob-triggered by archive/{name}, a container nothing writes to during the conversations."""

import json

import azure.functions as func

app = func.FunctionApp()


@app.route(route="copy/{name}", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
@app.blob_input(arg_name="src", path="images/{name}", connection="AzureWebJobsStorage", data_type=func.DataType.BINARY)
@app.blob_output(arg_name="dst", path="thumbs/{name}", connection="AzureWebJobsStorage")
def copy_blob(req: func.HttpRequest, src: bytes, dst: func.Out[bytes]) -> func.HttpResponse:
    dst.set(src.upper())
    return func.HttpResponse(json.dumps({"read": len(src)}), status_code=201, mimetype="application/json")


bp = func.Blueprint()


@bp.blob_trigger(arg_name="myblob", path="archive/{name}", connection="AzureWebJobsStorage")
def on_blob(myblob: func.InputStream) -> None:
    pass


app.register_functions(bp)
