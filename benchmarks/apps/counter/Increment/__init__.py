"""POST /api/increment/{name}: blob counters/{name} holds a decimal integer; read it, add 1, write it back.

Answers {"read": <the value read>, "wrote": <the value written>} so that the client, which knows what the
previous request wrote, can tell whether this read saw it (the consistency benchmark, the paper's Table 6).
A missing blob reads as null and counts from 0.
"""

import json

import azure.functions as func


def main(req: func.HttpRequest, current: bytes, next: func.Out[bytes]) -> func.HttpResponse:
    read = int(bytes(current).decode("ascii")) if current is not None else None
    wrote = (read or 0) + 1
    next.set(str(wrote).encode("ascii"))
    return func.HttpResponse(json.dumps({"read": read, "wrote": wrote}), mimetype="application/json")
