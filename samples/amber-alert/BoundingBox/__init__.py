"""Stage 1 of the AMBER Alert pipeline: find the bounding box of the subject in a camera image.

HTTP GET/POST /api/bounding-box/{image}: reads images/{image} and the 35 MiB model
models/bounding-box.bin through blob input bindings, writes the labelled image to labelled/{image}
(which blob-triggers People and Car) and answers with the detection as JSON.
"""

import json
import logging
import time

import azure.functions as func

from ..shared_code import amber


def main(req: func.HttpRequest, picture: func.InputStream, model: func.InputStream,
         labelled: func.Out[bytes]) -> func.HttpResponse:
    name = req.route_params.get("image")
    if picture is None:
        return func.HttpResponse(json.dumps({"error": f"images/{name} does not exist"}),
                                 status_code=404, mimetype="application/json")
    started = time.perf_counter()
    weights = amber.load_model(model, "bounding-box.bin")
    image = amber.read_ppm(amber.buffer_of(picture))
    box = amber.detect_box(image, weights)
    comments = [
        f"amber box x={box['x']} y={box['y']} w={box['w']} h={box['h']} score={box['score']}",
        f"amber model bounding-box.bin size={weights.size} crc32={weights.fingerprint:08x}",
    ]
    labelled.set(amber.write_ppm(image.width, image.height, amber.draw_box(image, box), comments))
    compute_ms = (time.perf_counter() - started) * 1000
    logging.info("BoundingBox %s: box %s (model %d bytes, %d touched) in %.1f ms",
                 name, box, weights.size, weights.bytes_touched, compute_ms)
    body = {
        "image": name,
        "size": f"{image.width}x{image.height}",
        "box": box,
        "model": {"name": weights.name, "bytes": weights.size, "bytesTouched": weights.bytes_touched,
                  "crc32": f"{weights.fingerprint:08x}"},
        "labelled": f"labelled/{name}",
        "computeMs": round(compute_ms, 2),
    }
    return func.HttpResponse(json.dumps(body), status_code=200, mimetype="application/json")
