"""A v2 app with a queue trigger and queue outputs (worker indexing)."""

import azure.functions as func

app = func.FunctionApp()


@app.function_name("OnOrder")
@app.queue_trigger(arg_name="msg", queue_name="orders", connection="AzureWebJobsStorage")
@app.queue_output(arg_name="outq", queue_name="shipments")
def on_order(msg: func.QueueMessage, outq: func.Out[func.QueueMessage]) -> None:
    order = msg.get_json()
    outq.set(func.QueueMessage(body=f'{{"ship": {order["id"]}, "dequeued": {msg.dequeue_count}}}'))
