#!/usr/bin/env python3
"""FaaSCache Python language worker: started by the host with
`--host H --port P --workerId W --requestId R --grpcMaxMessageLength M` and/or
`--functions-uri http://H:P/ --functions-worker-id W --functions-request-id R
--functions-grpc-max-message-length M` (the newer forms win)."""

from __future__ import annotations

import asyncio
import logging
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from faascache_worker.cli import ArgumentError, parse_args  # noqa: E402


def main(argv: list[str]) -> int:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("faascache-python-worker: %(levelname)s %(message)s"))
    worker_log = logging.getLogger("faascache_worker")
    worker_log.addHandler(handler)
    worker_log.setLevel(os.environ.get("FAASCACHE_WORKER_LOG_LEVEL", "INFO").upper())
    try:
        args = parse_args(argv)
    except ArgumentError as e:
        print(f"worker.py: {e}", file=sys.stderr)
        return 2

    from faascache_worker.dispatcher import Dispatcher
    from faascache_worker.protos import ProtoBuildError

    try:
        dispatcher = Dispatcher(args)
    except ProtoBuildError as e:
        worker_log.error("%s", e)
        return 1
    code = asyncio.run(dispatcher.run())
    if dispatcher.busy_threads:
        # A sync function is still running after the grace period; its thread cannot be stopped.
        worker_log.warning("exiting with %d invocation(s) still running", dispatcher.busy_threads)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
