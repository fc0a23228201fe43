"""Stage 2 of the AMBER Alert pipeline: the car detector.

Blob-triggered by labelled/{name} (written by BoundingBox; through the FaaSCache host that write fires
this function at once, a cache trigger). Reads the 5 MiB model models/car.bin through a blob input
binding and writes what it found inside the labelled box to cars/{name}.json.
"""

import azure.functions as func

from ..shared_code import amber

LEVEL = 60


def main(labelled: func.InputStream, model: func.InputStream, result: func.Out[str]) -> None:
    result.set(amber.run_detector("car", labelled, model, "car.bin", LEVEL))
