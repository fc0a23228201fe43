"""Describes its stream input as JSON: the blob's name (from the trigger metadata), its length, its content."""

import json

import azure.functions as func


def main(blob: func.InputStream) -> str:
    return json.dumps({"name": blob.name, "length": blob.length, "content": blob.read().decode("utf-8")})
