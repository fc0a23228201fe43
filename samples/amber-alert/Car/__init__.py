"""Stage 2 of the AMBER Alert pipeline: the car detector.

Blob-triggered by labelled/{name} (written by BoundingBox; through the FaaSCache host that write fires
this function at once, a cache trigger). Reads the 5 MiB model models/car.bin through a blob input
binding and writes what it found inside the labelled box to cars/{name}.json.
"""

import json
import logging
import time

import azure.functions as func

from ..shared_code import amber

LEVEL = 60


def main(labelled: func.InputStream, model: func.InputStream, result: func.Out[str]) -> None:
    started = time.perf_counter()
    weights = amber.load_model(model, "car.bin")
    image = amber.read_ppm(amber.buffer_of(labelled))
    box = amber.box_from_comments(image.comments)
    found = amber.classify(image, box, weights, LEVEL)
    compute_ms = (time.perf_counter() - started) * 1000
    logging.info("Car %s: %d in box %s (model %d bytes, %d touched) in %.1f ms",
                 labelled.name, found["count"], box, weights.size, weights.bytes_touched, compute_ms)
    result.set(json.dumps({
        "source": labelled.name,
        "detector": "car",
        "box": box,
        "count": found["count"],
        "cells": found["cells"],
        "model": {"name": weights.name, "bytes": weights.size, "bytesTouched": weights.bytes_touched,
                  "crc32": f"{weights.fingerprint:08x}"},
        "computeMs": round(compute_ms, 2),
    }))
