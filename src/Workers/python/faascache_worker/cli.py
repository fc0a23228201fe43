"""The command line the Functions host appends when it starts a worker.

The host passes both the old and the newer forms
(`--host H --port P --workerId W --requestId R --grpcMaxMessageLength M` and
`--functions-uri http://H:P/ --functions-worker-id W --functions-request-id R
--functions-grpc-max-message-length M`); the newer ones win when both are present.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from urllib.parse import urlsplit

# The host's default (int.MaxValue): data larger than a gRPC message goes over shared memory anyway.
DEFAULT_MAX_MESSAGE_LENGTH = 2_147_483_647


class ArgumentError(ValueError):
    """The command line lacks the host address or an id."""


@dataclass(frozen=True)
class WorkerArgs:
    host: str
    port: int
    worker_id: str
    request_id: str
    max_message_length: int = DEFAULT_MAX_MESSAGE_LENGTH

    @property
    def target(self) -> str:
        """gRPC target, with brackets for an IPv6 literal."""
        host = f"[{self.host}]" if ":" in self.host and not self.host.startswith("[") else self.host
        return f"{host}:{self.port}"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="worker.py", description="FaaSCache Python language worker")
    p.add_argument("--host")
    p.add_argument("--port", type=int)
    p.add_argument("--workerId", dest="worker_id")
    p.add_argument("--requestId", dest="request_id")
    p.add_argument("--grpcMaxMessageLength", dest="max_length", type=int)
    p.add_argument("--functions-uri", dest="uri")
    p.add_argument("--functions-worker-id", dest="new_worker_id")
    p.add_argument("--functions-request-id", dest="new_request_id")
    p.add_argument("--functions-grpc-max-message-length", dest="new_max_length", type=int)
    return p


def parse_args(argv: list[str]) -> WorkerArgs:
    """Parses the host's arguments; arguments this worker does not know are ignored, as hosts add new ones."""
    ns, _unknown = _parser().parse_known_args(argv)
    host, port = ns.host, ns.port
    if ns.uri:
        parts = urlsplit(ns.uri if "://" in ns.uri else f"http://{ns.uri}")
        if not parts.hostname or not parts.port:
            raise ArgumentError(f"--functions-uri {ns.uri!r} must look like http://host:port/")
        host, port = parts.hostname, parts.port
    worker_id = ns.new_worker_id or ns.worker_id
    request_id = ns.new_request_id or ns.request_id
    max_length = ns.new_max_length or ns.max_length or DEFAULT_MAX_MESSAGE_LENGTH
    missing = [
        name
        for name, value in (
            ("--functions-uri (or --host/--port)", host and port),
            ("--functions-worker-id (or --workerId)", worker_id),
            ("--functions-request-id (or --requestId)", request_id),
        )
        if not value
    ]
    if missing:
        raise ArgumentError("missing " + ", ".join(missing))
    return WorkerArgs(str(host), int(port), str(worker_id), str(request_id), int(max_length))
