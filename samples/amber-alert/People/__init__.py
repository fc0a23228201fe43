"""Stage 2 of the AMBER Alert pipeline: the people detector.

Blob-triggered by labelled/{name} (written by BoundingBox; through the FaaSCache host that write fires
this function at once, a cache trigger). Reads the 97 MiB model models/people.bin through a blob input
binding and writes what it found inside the labelled box to people/{name}.json.
"""

import azure.functions as func

from ..shared_code import amber

LEVEL = 40


def main(labelled: func.InputStream, model: func.InputStream, result: func.Out[str]) -> None:
    result.set(amber.run_detector("people", labelled, model, "people.bin", LEVEL))
