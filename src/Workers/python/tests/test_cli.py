"""The host's command line, old and new forms."""

from __future__ import annotations

import pytest

from faascache_worker.cli import DEFAULT_MAX_MESSAGE_LENGTH, ArgumentError, parse_args


def test_old_form():
    a = parse_args(["--host", "127.0.0.1", "--port", "5000", "--workerId", "w", "--requestId", "r",
                    "--grpcMaxMessageLength", "1000"])
    assert (a.host, a.port, a.worker_id, a.request_id, a.max_message_length) == ("127.0.0.1", 5000, "w", "r", 1000)
    assert a.target == "127.0.0.1:5000"


def test_newer_form_wins_over_the_old_one():
    a = parse_args([
        "--host", "old", "--port", "1", "--workerId", "w-old", "--requestId", "r-old", "--grpcMaxMessageLength", "1",
        "--functions-uri", "http://127.0.0.1:7777/", "--functions-worker-id", "w-new",
        "--functions-request-id", "r-new", "--functions-grpc-max-message-length", "2147483647",
    ])
    assert (a.host, a.port, a.worker_id, a.request_id) == ("127.0.0.1", 7777, "w-new", "r-new")
    assert a.max_message_length == 2147483647


def test_ipv6_and_defaults_and_unknown_arguments():
    a = parse_args(["--functions-uri", "http://[::1]:9000/", "--functions-worker-id", "w",
                    "--functions-request-id", "r", "--some-future-flag", "x"])
    assert a.target == "[::1]:9000" and a.max_message_length == DEFAULT_MAX_MESSAGE_LENGTH


def test_missing_arguments_are_named():
    with pytest.raises(ArgumentError, match="--functions-uri .*--functions-request-id"):
        parse_args(["--workerId", "w"])
    with pytest.raises(ArgumentError, match="must look like"):
        parse_args(["--functions-uri", "http://nohostport", "--workerId", "w", "--requestId", "r"])
