"""The "inference" of the AMBER Alert sample: small but real compute over real data.

The paper's pipeline (Faa$T, SoCC'21, Fig. 9) runs a bounding-box model (35 MB) over a camera image and
hands the labelled image to a people model (97 MB) and a car model (5 MB). Here the models are blobs of
random bytes and "inference" is cheap arithmetic, so what the timings show is what the cache changes:
how each stage gets its model and image.

- A model is read as a buffer: on the FaaSCache worker `InputStream.getbuffer()` is the cachelet's shared
  memory itself (no copy); elsewhere (Azure Functions' own worker) one `read()` of the bytes the host
  already sent. The code is the same on both.
- Inference touches the model: a CRC-32 over one 4 KiB window every 64 KiB (1/16 of the model's pages,
  spread over all of it), and the first byte of each window becomes a "weight".
- Images are binary PPM (P6, 8-bit RGB), which any image viewer opens; the labelled image is the same
  picture with the detected box drawn in red and the detection written as `# amber ...` header comments.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any

STRIDE = 64 * 1024
WINDOW = 4 * 1024
CELL = 16  # detection works on 16 x 16 pixel cells


def buffer_of(stream: Any) -> memoryview:
    """The blob's bytes as a read-only buffer, without a copy where the worker allows it."""
    getbuffer = getattr(stream, "getbuffer", None)
    if callable(getbuffer):
        return memoryview(getbuffer())  # FaaSCache worker: a view of the shared-memory map
    return memoryview(stream.read())  # any other worker: the bytes it already holds


@dataclass(frozen=True)
class Model:
    name: str
    size: int
    fingerprint: int
    weights: bytes
    bytes_touched: int

    def weight(self, i: int) -> int:
        return self.weights[i % len(self.weights)] if self.weights else 1


def load_model(stream: Any, name: str) -> Model:
    """Touches one window per stride of the model: a fingerprint and a weight per window."""
    view = buffer_of(stream)
    crc, touched, weights = 0, 0, bytearray()
    for offset in range(0, len(view), STRIDE):
        window = view[offset : offset + WINDOW]
        crc = zlib.crc32(window, crc)
        touched += len(window)
        weights.append(window[0])
    return Model(name=name, size=len(view), fingerprint=crc, weights=bytes(weights), bytes_touched=touched)


@dataclass(frozen=True)
class Image:
    width: int
    height: int
    comments: list[str]
    pixels: memoryview  # width * height * 3 bytes, RGB


def read_ppm(data: Any) -> Image:
    """Parses a binary PPM (P6, maxval 255) without copying the pixels."""
    view = memoryview(data).cast("B") if not isinstance(data, memoryview) else data
    tokens: list[bytes] = []
    comments: list[str] = []
    pos = 0
    while len(tokens) < 4:
        if pos >= len(view):
            raise ValueError("not a PPM image: the header ends early")
        c = view[pos]
        if c == ord("#"):
            end = pos
            while end < len(view) and view[end] != ord("\n"):
                end += 1
            comments.append(bytes(view[pos + 1 : end]).decode("utf-8", "replace").strip())
            pos = end + 1
        elif chr(c).isspace():
            pos += 1
        else:
            end = pos
            while end < len(view) and not chr(view[end]).isspace():
                end += 1
            tokens.append(bytes(view[pos:end]))
            pos = end
    pos += 1  # the single whitespace byte after maxval
    if tokens[0] != b"P6" or tokens[3] != b"255":
        raise ValueError(f"not an 8-bit binary PPM image (magic {tokens[0]!r}, maxval {tokens[3]!r})")
    width, height = int(tokens[1]), int(tokens[2])
    pixels = view[pos : pos + width * height * 3]
    if len(pixels) != width * height * 3:
        raise ValueError(f"PPM image {width}x{height} is truncated: {len(pixels)} pixel bytes")
    return Image(width, height, comments, pixels)


def write_ppm(width: int, height: int, pixels: Any, comments: list[str]) -> bytes:
    header = [b"P6"] + [f"# {c}".encode() for c in comments] + [f"{width} {height}".encode(), b"255"]
    return b"\n".join(header) + b"\n" + bytes(pixels)


def cell_brightness(image: Image) -> list[list[int]]:
    """Mean brightness per 16 x 16 cell, from every fourth row of each cell."""
    cols, rows = image.width // CELL, image.height // CELL
    grid = [[0] * cols for _ in range(rows)]
    stride = image.width * 3
    for cy in range(rows):
        for y in range(cy * CELL, cy * CELL + CELL, 4):
            row = image.pixels[y * stride : (y + 1) * stride]
            for cx in range(cols):
                grid[cy][cx] += sum(row[cx * CELL * 3 : (cx + 1) * CELL * 3])
    samples = (CELL // 4) * CELL * 3
    return [[v // samples for v in r] for r in grid]


def detect_box(image: Image, model: Model) -> dict[str, int]:
    """The brightest cell, weighted by the model, grown over its bright neighbours: x, y, w, h in pixels."""
    grid = cell_brightness(image)
    rows, cols = len(grid), len(grid[0])
    score = [[grid[y][x] * (128 + model.weight(y * cols + x)) for x in range(cols)] for y in range(rows)]
    by, bx = max(((y, x) for y in range(rows) for x in range(cols)), key=lambda p: score[p[0]][p[1]])
    threshold = grid[by][bx] * 3 // 4
    x0 = x1 = bx
    y0 = y1 = by
    while x0 > 0 and grid[by][x0 - 1] >= threshold:
        x0 -= 1
    while x1 < cols - 1 and grid[by][x1 + 1] >= threshold:
        x1 += 1
    while y0 > 0 and grid[y0 - 1][bx] >= threshold:
        y0 -= 1
    while y1 < rows - 1 and grid[y1 + 1][bx] >= threshold:
        y1 += 1
    return {
        "x": x0 * CELL,
        "y": y0 * CELL,
        "w": (x1 - x0 + 1) * CELL,
        "h": (y1 - y0 + 1) * CELL,
        "score": score[by][bx],
    }


def draw_box(image: Image, box: dict[str, int]) -> bytearray:
    """A copy of the pixels with the box's border in red (2 px)."""
    out = bytearray(image.pixels)
    stride = image.width * 3
    red = b"\xff\x00\x00"
    x0, y0 = box["x"], box["y"]
    x1, y1 = min(image.width, x0 + box["w"]) - 1, min(image.height, y0 + box["h"]) - 1
    for y in (y0, y0 + 1, y1 - 1, y1):
        out[y * stride + x0 * 3 : y * stride + (x1 + 1) * 3] = red * (x1 - x0 + 1)
    for y in range(y0, y1 + 1):
        for x in (x0, x0 + 1, x1 - 1, x1):
            out[y * stride + x * 3 : y * stride + x * 3 + 3] = red
    return out


def box_from_comments(comments: list[str]) -> dict[str, int]:
    """The box the bounding-box stage wrote into the labelled image: `amber box x=.. y=.. w=.. h=..`."""
    for c in comments:
        parts = c.split()
        if parts[:2] == ["amber", "box"]:
            return {k: int(v) for k, v in (p.split("=", 1) for p in parts[2:]) if k in ("x", "y", "w", "h")}
    raise ValueError("the labelled image has no '# amber box ...' comment: was it written by BoundingBox?")


def classify(image: Image, box: dict[str, int], model: Model, level: int) -> dict[str, Any]:
    """Counts the cells inside the box whose model-weighted brightness passes `level`: the "detections"."""
    grid = cell_brightness(image)
    hits = []
    for cy in range(box["y"] // CELL, (box["y"] + box["h"]) // CELL):
        for cx in range(box["x"] // CELL, (box["x"] + box["w"]) // CELL):
            cols = len(grid[0])
            if grid[cy][cx] * model.weight(cy * cols + cx) >= level * 255:
                hits.append({"x": cx * CELL, "y": cy * CELL, "w": CELL, "h": CELL})
    return {"count": len(hits), "cells": hits[:16]}


def run_detector(detector: str, labelled: Any, model: Any, model_name: str, level: int) -> str:
    """Stage 2 (people or car): classify what is inside the labelled box; returns the result as JSON."""
    import json
    import logging
    import time

    started = time.perf_counter()
    weights = load_model(model, model_name)
    image = read_ppm(buffer_of(labelled))
    box = box_from_comments(image.comments)
    found = classify(image, box, weights, level)
    compute_ms = (time.perf_counter() - started) * 1000
    logging.info("%s %s: %d in box %s (model %d bytes, %d touched) in %.1f ms",
                 detector.capitalize(), labelled.name, found["count"], box, weights.size, weights.bytes_touched, compute_ms)
    return json.dumps({
        "source": labelled.name,
        "detector": detector,
        "box": box,
        "count": found["count"],
        "cells": found["cells"],
        "model": {"name": weights.name, "bytes": weights.size, "bytesTouched": weights.bytes_touched,
                  "crc32": f"{weights.fingerprint:08x}"},
        "computeMs": round(compute_ms, 2),
    })
