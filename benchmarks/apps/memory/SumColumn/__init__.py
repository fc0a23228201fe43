# The paper's Table 5 notebook step: the sum of one column of a 350 MB array of float64 (8 columns, row-major),
# stored as 8 row blocks read through the cache (each a local hit, remote hit or miss).
import json

import azure.functions as func
import numpy as np

COLUMNS = 8


def main(req: func.HttpRequest, part0: func.InputStream, part1: func.InputStream, part2: func.InputStream,
         part3: func.InputStream, part4: func.InputStream, part5: func.InputStream, part6: func.InputStream,
         part7: func.InputStream) -> func.HttpResponse:
    column = int(req.params.get("column", "0"))
    total = 0.0
    rows = 0
    for part in (part0, part1, part2, part3, part4, part5, part6, part7):
        block = np.frombuffer(part.read(), dtype=np.float64).reshape(-1, COLUMNS)
        total += float(block[:, column].sum())
        rows += block.shape[0]
        del block
    return func.HttpResponse(json.dumps({"sum": total, "rows": rows}), mimetype="application/json")
