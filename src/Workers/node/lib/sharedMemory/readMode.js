'use strict';
/**
 * read mode (mmap-io missing or broken): one read of the region into a Buffer. From 32 MiB up the Buffer comes
 * from a pool: it is lent to the invocation and taken back when the invocation ends.
 */
const fs = require('node:fs');
const { promisify } = require('node:util');
const { HEADER_SIZE, MIN_BYTES_FOR_SHARED_MEMORY, SharedMemoryError, checkHeader } = require('./format');

const POOL_SETTING = 'FAASCACHE_NODE_SHM_POOL_BYTES';

// Below this an input gets a Buffer of its own: glibc's malloc already recycles blocks up to its mmap
// threshold (at most 32 MiB on 64-bit), and a reused pool Buffer measured no faster there. Above it every
// fresh Buffer is new pages, faulted in by the read (bench/shm-read.js: about twice the cost at 128 MiB).
const POOL_MIN_BYTES = 32 * 1024 * 1024;
const POOL_GRANULE = 1024 * 1024;
// Smaller regions are read on the event loop: a thread-pool round trip costs more than the copy.
const SYNC_READ_MAX = 1024 * 1024;
const DEFAULT_POOL_BYTES = 256 * 1024 * 1024;

/**
 * Large Buffers for read-mode inputs, reused across invocations so a 128 MB input does not cost a fresh
 * allocation (and its page faults) each time. A Buffer is lent for one invocation; when it ends the memory is
 * moved out of it (ArrayBuffer transfer, no copy), so a function that kept a reference sees an empty Buffer
 * instead of the next invocation's data.
 */
class BufferPool {
  /** @param {number} [limitBytes] most bytes kept while idle */
  constructor(limitBytes = Number(process.env[POOL_SETTING] || DEFAULT_POOL_BYTES)) {
    this.limitBytes = Number.isFinite(limitBytes) && limitBytes >= 0 ? limitBytes : DEFAULT_POOL_BYTES;
    /** @type {ArrayBuffer[]} idle, oldest first */
    this.free = [];
    this.freeBytes = 0;
    /** @type {WeakSet<ArrayBufferLike>} */
    this.lent = new WeakSet();
  }

  /**
   * A Buffer of exactly `size` bytes (contents undefined).
   * @param {number} size
   * @returns {Buffer}
   */
  acquire(size) {
    if (size < POOL_MIN_BYTES) return Buffer.allocUnsafeSlow(size);
    let best = -1;
    for (let i = 0; i < this.free.length; i++) {
      const cap = this.free[i].byteLength;
      // Best fit, but never lend a buffer far larger than asked (it would sit unused for the invocation).
      if (cap >= size && cap <= Math.max(2 * size, size + MIN_BYTES_FOR_SHARED_MEMORY) && (best < 0 || cap < this.free[best].byteLength)) {
        best = i;
      }
    }
    let ab;
    if (best >= 0) {
      ab = this.free.splice(best, 1)[0];
      this.freeBytes -= ab.byteLength;
    } else {
      ab = new ArrayBuffer(Math.ceil(size / POOL_GRANULE) * POOL_GRANULE);
    }
    this.lent.add(ab);
    return Buffer.from(ab, 0, size);
  }

  /** @param {Buffer} buffer */
  isLent(buffer) {
    return this.lent.has(buffer.buffer);
  }

  /**
   * Takes a lent Buffer back (its memory leaves the Buffer the function saw) and keeps it if within the limit.
   * @param {Buffer} buffer
   */
  release(buffer) {
    const ab = /** @type {ArrayBuffer} */ (buffer.buffer);
    if (!this.lent.has(ab)) return;
    this.lent.delete(ab);
    if (ab.byteLength > this.limitBytes) return; // never kept: leave it to the function and the GC
    while (this.freeBytes + ab.byteLength > this.limitBytes && this.free.length) {
      this.freeBytes -= /** @type {ArrayBuffer} */ (this.free.shift()).byteLength;
    }
    const moved = structuredClone(ab, { transfer: [ab] });
    this.free.push(moved);
    this.freeBytes += moved.byteLength;
  }

  clear() {
    this.free = [];
    this.freeBytes = 0;
  }
}

const readvAsync = promisify(fs.readv);
const readAsync = promisify(fs.read);

/**
 * Reads content[offset, offset+count) of an open map with one read (header and content together when
 * offset is 0), on the event loop for small regions, in libuv's thread pool for large ones.
 * @param {string} name
 * @param {number} fd
 * @param {number} size the file's size
 * @param {number} offset
 * @param {number} count
 * @param {Buffer} content where the region goes (count bytes)
 */
async function readRegion(name, fd, size, offset, count, content) {
  const header = Buffer.allocUnsafe(HEADER_SIZE);
  const sync = count <= SYNC_READ_MAX;
  let done;
  if (offset === 0) {
    done = (sync ? fs.readvSync(fd, [header, content], 0) : (await readvAsync(fd, [header, content], 0)).bytesRead) - HEADER_SIZE;
  } else {
    if (fs.readSync(fd, header, 0, HEADER_SIZE, 0) !== HEADER_SIZE) done = -1;
    else done = 0;
  }
  if (done < 0) throw new SharedMemoryError(`shared-memory map ${JSON.stringify(name)} ended inside its header`);
  while (done < count) { // a short read: finish the region (tmpfs normally answers in one)
    const position = HEADER_SIZE + offset + done;
    const n = sync ? fs.readSync(fd, content, done, count - done, position) : (await readAsync(fd, content, done, count - done, position)).bytesRead;
    if (n === 0) throw new SharedMemoryError(`shared-memory map ${JSON.stringify(name)} ended after ${done} of ${count} bytes`);
    done += n;
  }
  checkHeader(name, size, header[0], header.readBigInt64LE(1), offset, count);
  return content;
}

module.exports = { POOL_SETTING, BufferPool, readRegion };
