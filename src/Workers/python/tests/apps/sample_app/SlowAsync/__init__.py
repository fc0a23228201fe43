import asyncio
import logging

import azure.functions as func


async def main(req: func.HttpRequest) -> func.HttpResponse:
    await asyncio.sleep(float(req.params.get("seconds", "0.5")))
    logging.warning("SlowAsync done")
    return func.HttpResponse("async done")
