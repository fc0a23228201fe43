"""FaaSCache's Python language worker: speaks FunctionRpc to the host, reads and writes shared memory."""

from pathlib import Path

__version__ = "0.1.0"

# Folder holding worker.py and worker.config.json (what the host calls the worker directory).
WORKER_DIR = Path(__file__).resolve().parent.parent
