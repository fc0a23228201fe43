"""A queue trigger read as str, fanned out as a list of messages; the text's bytes to a second queue."""

import typing

import azure.functions as func


def main(text: str, outq: func.Out[typing.List[str]], raw: func.Out[bytes]) -> None:
    outq.set([f"{text}-{i}" for i in range(3)])
    raw.set(text.encode("utf-8"))
