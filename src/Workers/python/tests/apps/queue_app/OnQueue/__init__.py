"""A queue trigger (func.QueueMessage) with a str queue output and a QueueMessage as its $return."""

import json

import azure.functions as func


def main(msg: func.QueueMessage, outq: func.Out[str]) -> func.QueueMessage:
    seen = {
        "id": msg.id,
        "body": msg.get_body().decode("utf-8"),
        "dequeue_count": msg.dequeue_count,
        "insertion_time": msg.insertion_time.isoformat(),
        "expiration_time": msg.expiration_time.isoformat(),
        "time_next_visible": msg.time_next_visible.isoformat(),
        "pop_receipt": msg.pop_receipt,
        "class": f"{type(msg).__module__}.{type(msg).__qualname__}",
    }
    outq.set(json.dumps(seen, sort_keys=True))
    return func.QueueMessage(id="reply-1", body=f"re: {msg.get_body().decode('utf-8')}")
