"""Reports, from inside the worker, what backs the blob inputs (FaaSCache extensions: getbuffer, memoryview)."""

import json
import mmap

import azure.functions as func


def main(req: func.HttpRequest, inputblob: func.InputStream, rawblob: memoryview, context: func.Context) -> str:
    context.log("probing %s", context.function_name)
    return json.dumps({
        "stream_backed_by_mmap": isinstance(inputblob.getbuffer().obj, mmap.mmap),
        "view_backed_by_mmap": isinstance(rawblob.obj, mmap.mmap),
        "same_bytes": inputblob.read() == bytes(rawblob),
    })
