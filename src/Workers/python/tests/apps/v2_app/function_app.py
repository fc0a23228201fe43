"""The v2 app of the worker's tests: the worker-indexing reference app (copy_blob, on_blob from a Blueprint) plus
a timer function with a retry policy and an HTTP function that takes the app's defaults."""

import json
import logging

import azure.functions as func
from v2_app_blueprints import bp

app = func.FunctionApp()  # http_auth_level defaults to FUNCTION


@app.route(route="copy/{name}", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
@app.blob_input(arg_name="src", path="in/{name}", connection="AzureWebJobsStorage", data_type=func.DataType.BINARY)
@app.blob_output(arg_name="dst", path="out/{name}", connection="AzureWebJobsStorage")
def copy_blob(req: func.HttpRequest, src: func.InputStream, dst: func.Out[bytes]) -> func.HttpResponse:
    data = src.read()
    dst.set(data.upper())
    logging.info("copy_blob read %d bytes", len(data))
    body = {"read": len(data), "name": req.route_params.get("name"), "zero_copy": hasattr(src, "getbuffer")}
    return func.HttpResponse(json.dumps(body), status_code=201, mimetype="application/json")


@app.function_name("Tick")
@app.schedule(schedule="0 */5 * * * *", arg_name="timer", run_on_startup=False, use_monitor=False)
@app.blob_output(arg_name="$return", path="ticks/last.txt", connection="AzureWebJobsStorage", data_type="string")
@app.retry(strategy="fixed_delay", max_retry_count="2", delay_interval="00:00:05")
def tick(timer: func.TimerRequest) -> str:
    return f"past_due={timer.past_due} schedule={json.dumps(timer.schedule, sort_keys=True)}"


@app.function_name("Hello")
@app.route()
def hello(req: func.HttpRequest, context: func.Context) -> str:
    return f"hello {req.params.get('who', 'world')} from {context.function_name}"


app.register_functions(bp)
