"""A Blueprint of the test app: its function counts only once function_app.py registers it."""

import logging

import azure.functions as func

bp = func.Blueprint()


@bp.blob_trigger(arg_name="myblob", path="in/{name}", connection="AzureWebJobsStorage")
async def on_blob(myblob: func.InputStream) -> None:
    logging.info("on_blob %s: %d bytes", myblob.name, len(myblob.read()))
