# The paper's Table 5 notebook step: the sum of one column of a 350 MB array of float64 (8 columns, row-major),
# stored as 16 row blocks read through the cache (each a local hit, remote hit or miss). Sixteen blocks, not a few,
# so that the share a second instance owns under the consistent-hash ring is close to half in every run.
import json

import azure.functions as func
import numpy as np

COLUMNS = 8


def main(req: func.HttpRequest, part0: func.InputStream, part1: func.InputStream, part2: func.InputStream,
         part3: func.InputStream, part4: func.InputStream, part5: func.InputStream, part6: func.InputStream,
         part7: func.InputStream, part8: func.InputStream, part9: func.InputStream, part10: func.InputStream,
         part11: func.InputStream, part12: func.InputStream, part13: func.InputStream, part14: func.InputStream,
         part15: func.InputStream) -> func.HttpResponse:
    column = int(req.params.get("column", "0"))
    total = 0.0
    rows = 0
    for part in (part0, part1, part2, part3, part4, part5, part6, part7, part8, part9, part10, part11, part12,
                 part13, part14, part15):
        block = np.frombuffer(part.read(), dtype=np.float64).reshape(-1, COLUMNS)
        total += float(block[:, column].sum())
        rows += block.shape[0]
        del block
    return func.HttpResponse(json.dumps({"sum": total, "rows": rows}), mimetype="application/json")
