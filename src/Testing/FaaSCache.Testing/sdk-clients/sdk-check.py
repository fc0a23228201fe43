#!/usr/bin/env python3
"""The Python storage SDK (Debian's azure-storage-blob) against the SDK endpoint: what
test/FaaSCache.Host.Tests/BlobEndpoint runs as a child process.

usage: FAASCACHE_SDK_ENDPOINT_CONNECTION=... sdk-check.py <check> <container>

The connection string (storage's, with its blob endpoint at the SDK endpoint: what a function gets) comes through the
environment. Checks:
  blocks  with 1 MiB single-shot and chunk limits, a 5 MiB upload (Put Block x5 + Put Block List) and a small one
          (Put Blob) as py/up.bin and py/small.txt; both downloaded whole (ranged GETs of 1 MiB) and in part, identical
          to what was uploaded; a create-only upload of an existing blob refused
  committed  a block list naming the blocks of an earlier commit in its <Committed> section and a new block in
          <Uncommitted> (py/committed.bin: a * 1000 + b * 2000 + c * 3000)
Prints one line per result; exits 1 naming what differed, 2 on bad usage.
"""

import hashlib
import os
import sys

from azure.core.exceptions import ResourceExistsError
from azure.storage.blob import BlobBlock, BlobServiceClient, BlockState


def blocks(connection: str, container: str) -> None:
    # 1 MiB single-shot and chunk limits: a 5 MiB upload is Put Block x5 + Put Block List, a download 5 ranged GETs.
    service = BlobServiceClient.from_connection_string(connection, max_single_put_size=1 << 20, max_block_size=1 << 20,
                                                       max_single_get_size=1 << 20, max_chunk_get_size=1 << 20)
    folder = service.get_container_client(container)
    data = bytes(range(256)) * (5 * 4096) + b"tail"
    folder.upload_blob("py/up.bin", data)
    small = b"hello from python"
    folder.upload_blob("py/small.txt", small)
    blob = folder.get_blob_client("py/up.bin")
    if blob.download_blob().readall() != data:
        raise SystemExit("whole download differs")
    if blob.download_blob(offset=1000, length=5000).readall() != data[1000:6000]:
        raise SystemExit("ranged download differs")
    if folder.get_blob_client("py/small.txt").download_blob().readall() != small:
        raise SystemExit("small download differs")
    try:
        folder.upload_blob("py/small.txt", b"again")
        raise SystemExit("create-only upload of an existing blob succeeded")
    except ResourceExistsError as e:
        print("exists:", e.error_code)
    print("sha256:", hashlib.sha256(data).hexdigest())


def committed(connection: str, container: str) -> None:
    # Blocks named by their section, as only some SDKs can: the blocks of an earlier commit as <Committed>, a new one
    # as <Uncommitted> (py/committed.bin).
    blob = BlobServiceClient.from_connection_string(connection).get_blob_client(container, "py/committed.bin")
    parts = [b"a" * 1000, b"b" * 2000, b"c" * 3000]
    blob.stage_block("block-0", parts[0])
    blob.stage_block("block-1", parts[1])
    blob.commit_block_list([BlobBlock("block-0"), BlobBlock("block-1")])
    blob.stage_block("block-2", parts[2])
    blob.commit_block_list([BlobBlock("block-0", BlockState.COMMITTED), BlobBlock("block-1", BlockState.COMMITTED),
                            BlobBlock("block-2", BlockState.UNCOMMITTED)])
    data = blob.download_blob().readall()
    if data != b"".join(parts):
        raise SystemExit(f"after committing committed + uncommitted blocks the blob has {len(data)} bytes, not a + b + c")
    print("sha256:", hashlib.sha256(data).hexdigest())


def main(argv: list[str]) -> int:
    connection = os.environ.get("FAASCACHE_SDK_ENDPOINT_CONNECTION")
    checks = {"blocks": blocks, "committed": committed}
    if not connection or len(argv) != 3 or argv[1] not in checks:
        print(__doc__.splitlines()[3], file=sys.stderr)
        return 2
    checks[argv[1]](connection, argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
