"""Fails: a user exception."""

import azure.functions as func


def main(req: func.HttpRequest) -> func.HttpResponse:
    raise ValueError("boom from user code")
