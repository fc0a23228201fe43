"""@app.retry: the host retries a failed invocation (fixed_delay or exponential_backoff; intervals "HH:MM:SS")."""

from __future__ import annotations

from typing import Any

from .core import Setting

RETRY_POLICY = "retry_policy"


class RetryPolicy(Setting):
    def __init__(self, strategy: str, max_retry_count: str, delay_interval: str | None = None,
                 minimum_interval: str | None = None, maximum_interval: str | None = None, **kwargs: Any) -> None:
        fields = [
            ("strategy", strategy),
            ("max_retry_count", max_retry_count),
            ("delay_interval", delay_interval),
            ("minimum_interval", minimum_interval),
            ("maximum_interval", maximum_interval),
        ]
        super().__init__(RETRY_POLICY, fields, kwargs)
