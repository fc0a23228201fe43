import logging
import threading
import time

import azure.functions as func


def run(req: func.HttpRequest, context: func.Context) -> str:
    logging.info("Slow started")
    time.sleep(float(req.params.get("seconds", "0.5")))
    return f"{context.function_name} {context.invocation_id} on {threading.current_thread().name}"
