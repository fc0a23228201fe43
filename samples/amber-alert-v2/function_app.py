"""The AMBER Alert pipeline of samples/amber-alert in the Python v2 programming model: the same three functions,
routes, blob paths, connections and behaviour, declared with decorators in one file (worker indexing).

- BoundingBox: HTTP GET/POST /api/bounding-box/{image}: reads images/{image} and the 35 MiB model
  models/bounding-box.bin through blob input bindings, writes the labelled image to labelled/{image} (which
  blob-triggers People and Car) and answers with the detection as JSON.
- People, Car: blob-triggered by labelled/{name}; read the 97 MiB models/people.bin (5 MiB models/car.bin) and write
  what they found inside the labelled box to people/{name}.json (cars/{name}.json).

The inference is the v1 sample's own code: shared_code is a link to ../amber-alert/shared_code.
"""

import json
import logging
import time

import azure.functions as func

from shared_code import amber

STORAGE = "AzureWebJobsStorage"
PEOPLE_LEVEL = 40
CAR_LEVEL = 60

app = func.FunctionApp()


@app.function_name("BoundingBox")
@app.route(route="bounding-box/{image}", methods=["GET", "POST"], auth_level=func.AuthLevel.ANONYMOUS)
@app.blob_input(arg_name="picture", path="images/{image}", connection=STORAGE, data_type=func.DataType.BINARY)
@app.blob_input(arg_name="model", path="models/bounding-box.bin", connection=STORAGE, data_type=func.DataType.BINARY)
@app.blob_output(arg_name="labelled", path="labelled/{image}", connection=STORAGE)
def bounding_box(req: func.HttpRequest, picture: func.InputStream, model: func.InputStream,
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


@app.function_name("People")
@app.blob_trigger(arg_name="labelled", path="labelled/{name}", connection=STORAGE, data_type=func.DataType.BINARY)
@app.blob_input(arg_name="model", path="models/people.bin", connection=STORAGE, data_type=func.DataType.BINARY)
@app.blob_output(arg_name="result", path="people/{name}.json", connection=STORAGE)
def people(labelled: func.InputStream, model: func.InputStream, result: func.Out[str]) -> None:
    result.set(amber.run_detector("people", labelled, model, "people.bin", PEOPLE_LEVEL))


@app.function_name("Car")
@app.blob_trigger(arg_name="labelled", path="labelled/{name}", connection=STORAGE, data_type=func.DataType.BINARY)
@app.blob_input(arg_name="model", path="models/car.bin", connection=STORAGE, data_type=func.DataType.BINARY)
@app.blob_output(arg_name="result", path="cars/{name}.json", connection=STORAGE)
def car(labelled: func.InputStream, model: func.InputStream, result: func.Out[str]) -> None:
    result.set(amber.run_detector("car", labelled, model, "car.bin", CAR_LEVEL))
