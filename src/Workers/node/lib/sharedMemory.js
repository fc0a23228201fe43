'use strict';
/**
 * Shared-memory maps in the Functions host's Linux layout, read without copying when the machine allows it.
 *
 * A map is the file `<dir>/AzureFunctions/<name>`, `<dir>` from FUNCTIONS_UNIX_SHARED_MEMORY_DIRECTORIES
 * (comma list) or /dev/shm. Byte 0 is 0x01 (initialized), bytes 1..8 the content length as a little-endian
 * int64, content from byte 9 (the layout of the C# `SharedMemoryMap`).
 *
 * Inputs come back as a `Buffer`, in one of two modes (`mode`, chosen once at start-up):
 *   mmap  the Buffer is a mapping of the cachelet's file (mmap-io): nothing is copied (Faa$T's local hit).
 *         The mapping is copy-on-write (MAP_PRIVATE, PROT_READ|PROT_WRITE) rather than a read-only shared one:
 *         reads see the cachelet's pages, but a function that writes into its input gets a private copy of
 *         that page instead of killing the worker with SIGSEGV (JavaScript cannot make a Buffer read-only) or
 *         corrupting the cached object. A mapping is kept per map file across invocations (MappingCache): V8
 *         counts every new mapping as external memory, and a fresh 128 MB mapping per invocation cost one
 *         mark-compact per invocation. A reused mapping is reset with MADV_DONTNEED before it is handed out
 *         again, which drops any page a function wrote (private pages) so the next invocation sees the file.
 *   read  one read of the region into a Buffer. From 32 MiB up the Buffer comes from a pool: it is lent to the
 *         invocation and taken back when the invocation ends.
 * FAASCACHE_NODE_SHM_MODE=mmap|read forces a mode (auto when unset).
 *
 * Outputs are written into a new map (random flat name, mode 0600) that the host adopts (FaaSCache) or copies
 * out and lets us delete (stock host).
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const fsp = require('node:fs/promises');
const os = require('node:os');
const path = require('node:path');
const { promisify } = require('node:util');
const { performance } = require('node:perf_hooks');

const DIRECTORIES_SETTING = 'FUNCTIONS_UNIX_SHARED_MEMORY_DIRECTORIES';
const MODE_SETTING = 'FAASCACHE_NODE_SHM_MODE';
const POOL_SETTING = 'FAASCACHE_NODE_SHM_POOL_BYTES';
const MAP_CACHE_SETTING = 'FAASCACHE_NODE_SHM_MAP_CACHE_BYTES';
const MAP_IDLE_SETTING = 'FAASCACHE_NODE_SHM_MAP_IDLE_MS';
const DEFAULT_ROOT = '/dev/shm';
const MAP_FOLDER = 'AzureFunctions';
const HEADER_SIZE = 9; // initialized flag + int64 content length
const INITIALIZED = 0x01;

// The stock host's window for shared-memory transfer (SharedMemoryConstants); FunctionDataCache lifts the minimum.
const MIN_BYTES_FOR_SHARED_MEMORY = 1024 * 1024;
const MAX_BYTES_FOR_SHARED_MEMORY = 2 * 1024 * 1024 * 1024 - 1;

// mmap-io passes the length as a C int.
const MMAP_MAX_LENGTH = 2 ** 31 - 1;
// Below this an input gets a Buffer of its own: glibc's malloc already recycles blocks up to its mmap
// threshold (at most 32 MiB on 64-bit), and a reused pool Buffer measured no faster there. Above it every
// fresh Buffer is new pages, faulted in by the read (bench/shm-read.js: about twice the cost at 128 MiB).
const POOL_MIN_BYTES = 32 * 1024 * 1024;
const POOL_GRANULE = 1024 * 1024;
// Smaller regions are read on the event loop: a thread-pool round trip costs more than the copy.
const SYNC_READ_MAX = 1024 * 1024;
const DEFAULT_POOL_BYTES = 256 * 1024 * 1024;
// mmap mode: mapped bytes kept across invocations (LRU over idle mappings), and how long an unused one stays.
const DEFAULT_MAP_CACHE_BYTES = 2 * 1024 * 1024 * 1024;
const DEFAULT_MAP_IDLE_MS = 60 * 1000;
// How often idle mappings are checked against their files (one stat each) and for age.
const MAP_SWEEP_MS = 1000;

const VALID_NAME = /^[A-Za-z0-9._-]{1,255}$/;

/** A map is missing, malformed, or cannot be created; the message names the map and the reason. */
class SharedMemoryError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'SharedMemoryError';
  }
}

/**
 * The configured root directories, in order (read each time: an environment reload may change them).
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {string[]}
 */
function roots(env = process.env) {
  const dirs = (env[DIRECTORIES_SETTING] || '').split(',').map((d) => d.trim()).filter(Boolean);
  return dirs.length ? dirs : [DEFAULT_ROOT];
}

/** @param {NodeJS.ProcessEnv} [env] */
function mapDirectories(env = process.env) {
  return roots(env).map((r) => path.join(r, MAP_FOLDER));
}

/**
 * Map names are flat file names; anything with a path separator is refused.
 * @param {string} name
 */
function validateMapName(name) {
  if (typeof name !== 'string' || !VALID_NAME.test(name) || name === '.' || name === '..') {
    throw new SharedMemoryError(`${JSON.stringify(name)} is not a valid shared-memory map name (letters, digits, '.', '_', '-')`);
  }
}

/**
 * Opens an existing map read-only, searching every configured directory as the host does.
 * @param {string} name
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {{ fd: number, file: string }}
 */
function openMap(name, env = process.env) {
  validateMapName(name);
  const searched = [];
  for (const dir of mapDirectories(env)) {
    const file = path.join(dir, name);
    try {
      // libuv opens files with O_CLOEXEC: a child process of user code never inherits the descriptor.
      return { fd: fs.openSync(file, fs.constants.O_RDONLY), file };
    } catch (e) {
      if (/** @type {any} */ (e).code !== 'ENOENT' && /** @type {any} */ (e).code !== 'ENOTDIR') {
        throw new SharedMemoryError(`cannot open shared-memory map ${JSON.stringify(name)} in ${dir}: ${errorText(e)}`);
      }
    }
    searched.push(dir);
  }
  throw new SharedMemoryError(`shared-memory map ${JSON.stringify(name)} not found in ${searched.join(', ')}`);
}

// ---- mode ---------------------------------------------------------------------------------------------

/**
 * @typedef {object} ModeInfo
 * @property {'mmap' | 'read'} mode
 * @property {string} reason why this mode (for the start-up log)
 * @property {any} [mmap] the mmap-io module, in mmap mode
 */

/**
 * Loads mmap-io and checks that it maps a file the way we rely on: the content is there, and a write made
 * afterwards through the file (as the cachelet's own mapping would) shows in the Buffer.
 * @returns {{ ok: true, mmap: any, version: string } | { ok: false, reason: string }}
 */
function probeMmap() {
  let mmap;
  let version = '?';
  try {
    mmap = /** @type {any} */ (require('mmap-io'));
    version = require('mmap-io/package.json').version;
  } catch (e) {
    const text = e instanceof Error ? e.message.split('\n')[0] : String(e);
    return { ok: false, reason: `mmap-io is not available (${text}); build it with CXXFLAGS=-std=gnu++17 npm ci` };
  }
  let dir;
  try {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'faascache-mmap-probe-'));
    const file = path.join(dir, 'probe');
    fs.writeFileSync(file, Buffer.from('\x01faascache-probe'));
    const fd = fs.openSync(file, 'r');
    let mapped;
    try {
      mapped = mmap.map(16, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE, fd, 0);
    } finally {
      fs.closeSync(fd);
    }
    const before = mapped.toString('latin1', 1, 16);
    const fdw = fs.openSync(file, 'r+');
    try {
      fs.writeSync(fdw, Buffer.from('X'), 0, 1, 1);
    } finally {
      fs.closeSync(fdw);
    }
    if (before !== 'faascache-probe' || mapped[1] !== 0x58) {
      return { ok: false, reason: 'mmap-io loaded but a mapping did not show the file\'s bytes' };
    }
    return { ok: true, mmap, version };
  } catch (e) {
    return { ok: false, reason: `mmap-io loaded but mapping a file failed: ${e instanceof Error ? e.message : e}` };
  } finally {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The input mode: FAASCACHE_NODE_SHM_MODE if set (mmap fails loudly when it cannot work), else mmap when
 * mmap-io works here, else read.
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {ModeInfo}
 */
function detectMode(env = process.env) {
  const wanted = (env[MODE_SETTING] || 'auto').trim().toLowerCase();
  if (wanted === 'read') return { mode: 'read', reason: `${MODE_SETTING}=read` };
  if (wanted !== 'auto' && wanted !== 'mmap') {
    throw new SharedMemoryError(`${MODE_SETTING}=${JSON.stringify(env[MODE_SETTING])} is not one of mmap, read, auto`);
  }
  const probe = probeMmap();
  if (probe.ok) {
    return { mode: 'mmap', reason: `zero copy: mmap-io ${probe.version} maps the cachelet's files copy-on-write`, mmap: probe.mmap };
  }
  if (wanted === 'mmap') throw new SharedMemoryError(`${MODE_SETTING}=mmap but ${probe.reason}`);
  return { mode: 'read', reason: probe.reason };
}

/** @type {ModeInfo | undefined} */
let active;

/** The process-wide mode, detected on first use. */
function activeMode() {
  if (!active) active = detectMode(process.env);
  return active;
}

// ---- the read mode's Buffer pool ----------------------------------------------------------------------

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

// ---- reading ------------------------------------------------------------------------------------------

/**
 * @param {string} name
 * @param {number} fileSize
 * @param {number} flag
 * @param {bigint} declared
 * @param {number} offset
 * @param {number} count
 */
function checkHeader(name, fileSize, flag, declared, offset, count) {
  if (flag !== INITIALIZED) {
    throw new SharedMemoryError(`shared-memory map ${JSON.stringify(name)} is not initialized (byte 0 is 0x${flag.toString(16).padStart(2, '0')}, expected 0x01)`);
  }
  if (declared < 0n || declared > BigInt(fileSize - HEADER_SIZE)) {
    throw new SharedMemoryError(`shared-memory map ${JSON.stringify(name)} declares ${declared} content bytes but the file holds ${fileSize - HEADER_SIZE}`);
  }
  if (offset + count > Number(declared)) {
    throw new SharedMemoryError(`region [${offset}, ${offset + count}) is outside shared-memory map ${JSON.stringify(name)} of ${declared} content bytes`);
  }
}

/**
 * @param {string} name
 * @param {number} offset
 * @param {number} count
 * @param {number} fileSize
 */
function checkRegion(name, offset, count, fileSize) {
  if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(count) || offset < 0 || count < 0) {
    throw new SharedMemoryError(`region offset ${offset}, count ${count} of shared-memory map ${JSON.stringify(name)} is not valid`);
  }
  if (fileSize < HEADER_SIZE) {
    throw new SharedMemoryError(`shared-memory map ${JSON.stringify(name)} is ${fileSize} bytes, shorter than its ${HEADER_SIZE}-byte header`);
  }
  if (HEADER_SIZE + offset + count > fileSize) {
    throw new SharedMemoryError(`region [${offset}, ${offset + count}) is outside shared-memory map ${JSON.stringify(name)} of ${fileSize - HEADER_SIZE} content bytes`);
  }
}

/**
 * Maps content[offset, offset+count) of an open map: the Buffer is the file's pages (zero copy).
 * @param {any} mmap mmap-io
 * @param {string} name
 * @param {number} fd
 * @param {number} size the file's size
 * @param {number} offset
 * @param {number} count
 * @returns {Buffer | undefined} undefined when the region is too large for mmap-io (the caller reads instead)
 */
function mapRegion(mmap, name, fd, size, offset, count) {
  const length = HEADER_SIZE + offset + count;
  if (length > MMAP_MAX_LENGTH) return undefined;
  const mapped = mmap.map(length, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE, fd, 0);
  checkHeader(name, size, mapped[0], mapped.readBigInt64LE(1), offset, count);
  return mapped.subarray(HEADER_SIZE + offset, length);
}

/**
 * @typedef {object} MappingEntry
 * @property {string} file the map's path
 * @property {number} dev
 * @property {number} ino
 * @property {number} size the file's size when mapped (the mapping's length)
 * @property {Buffer} buffer the whole mapping (page-aligned start)
 * @property {boolean} inUse lent to one invocation
 * @property {boolean} cached still in the cache (false once dropped: release then only lets go)
 * @property {number} lastUsed ms (cache clock)
 */

/**
 * mmap mode: one mapping per map file, kept across invocations.
 *
 * Why: mmap-io hands out each mapping as an external Buffer, which V8 counts as external memory; mapping a
 * 128 MB input anew per invocation pushed V8 past its external-memory limit every time (about one
 * mark-compact per invocation). The host's cache keeps a map file (same name, same inode) for as long as the
 * object is cached, so the worker keeps its mapping too and lends it to every invocation naming that file.
 *
 * Rules:
 * - Identity: an entry is lent only for the same file (device, inode, size) as the one just opened by name, so
 *   a map deleted and re-created under the same name gets a new mapping. While we hold a mapping, the kernel
 *   keeps its inode alive, so a new file cannot reuse that inode number.
 * - One invocation per mapping at a time: a concurrent invocation of the same map gets another mapping (also
 *   cached), so a write by one invocation never shows in another running one.
 * - Reset: before a kept mapping is lent again it gets MADV_DONTNEED; on a MAP_PRIVATE file mapping that
 *   discards the pages a function wrote (its private copies) and the next access reads the file's pages again.
 * - Bounds: total mapped bytes at most `maxBytes` (least recently used idle mappings go first); mappings idle
 *   for `idleMs`, or whose file is gone or replaced (checked every second, one stat each), are dropped.
 *   Dropping only lets go of the Buffer: V8 unmaps it when it collects it (a Buffer a function kept stays valid).
 */
class MappingCache {
  /**
   * @param {{ mmap: any, maxBytes?: number, idleMs?: number, now?: () => number, sweepMs?: number }} options
   */
  constructor(options) {
    this.mmap = options.mmap;
    const maxBytes = options.maxBytes ?? Number(process.env[MAP_CACHE_SETTING] ?? DEFAULT_MAP_CACHE_BYTES);
    this.maxBytes = Number.isFinite(maxBytes) && maxBytes >= 0 ? maxBytes : DEFAULT_MAP_CACHE_BYTES;
    const idleMs = options.idleMs ?? Number(process.env[MAP_IDLE_SETTING] ?? DEFAULT_MAP_IDLE_MS);
    this.idleMs = Number.isFinite(idleMs) && idleMs >= 0 ? idleMs : DEFAULT_MAP_IDLE_MS;
    this.now = options.now || (() => performance.now());
    this.sweepMs = options.sweepMs ?? MAP_SWEEP_MS;
    /** @type {Map<string, MappingEntry[]>} by path; each list holds mappings of one file identity */
    this.entries = new Map();
    this.bytes = 0;
    /** @type {NodeJS.Timeout | undefined} */
    this._timer = undefined;
    /** counters, for tests and diagnostics */
    this.stats = { maps: 0, reuses: 0, drops: 0 };
  }

  get enabled() {
    return this.maxBytes > 0;
  }

  /** Number of mappings held. */
  get size() {
    let n = 0;
    for (const list of this.entries.values()) n += list.length;
    return n;
  }

  /**
   * A mapping of the whole open file `fd` (stat `st`), lent to the caller until `release`.
   * @param {string} file
   * @param {number} fd
   * @param {fs.Stats} st
   * @returns {MappingEntry}
   */
  acquire(file, fd, st) {
    let list = this.entries.get(file);
    if (list && list.length && (list[0].dev !== st.dev || list[0].ino !== st.ino || list[0].size !== st.size)) {
      this._dropFile(file); // replaced (or resized) under the same name: never lend the old file's mapping
      list = undefined;
    }
    const idle = list && list.find((e) => !e.inUse);
    if (idle) {
      // Discard whatever was written into the mapping since the file was mapped: private pages go, and the
      // next access reads the file's (page-cache) pages again.
      if (this.mmap.MADV_DONTNEED !== undefined) this.mmap.advise(idle.buffer, this.mmap.MADV_DONTNEED);
      idle.inUse = true;
      idle.lastUsed = this.now();
      this.stats.reuses++;
      return idle;
    }
    const buffer = this.mmap.map(st.size, this.mmap.PROT_READ | this.mmap.PROT_WRITE, this.mmap.MAP_PRIVATE, fd, 0);
    this.stats.maps++;
    /** @type {MappingEntry} */
    const entry = { file, dev: st.dev, ino: st.ino, size: st.size, buffer, inUse: true, cached: this.enabled, lastUsed: this.now() };
    if (entry.cached) {
      if (list) list.push(entry);
      else this.entries.set(file, [entry]);
      this.bytes += entry.size;
      this._evictOverCap();
      this._schedule();
    }
    return entry;
  }

  /** @param {MappingEntry} entry */
  release(entry) {
    entry.inUse = false;
    entry.lastUsed = this.now();
    if (entry.cached) this._evictOverCap();
  }

  /**
   * Drops the mappings of every file named `name` (any directory); true when there were some.
   * @param {string} name
   */
  dropName(name) {
    let found = false;
    for (const file of [...this.entries.keys()]) {
      if (path.basename(file) === name) {
        this._dropFile(file);
        found = true;
      }
    }
    return found;
  }

  /**
   * Drops idle mappings unused for idleMs, and every mapping whose file is gone or is another file now.
   * Runs every second while something is cached (an unref'd timer: it never keeps the process alive).
   */
  sweep() {
    const now = this.now();
    for (const [file, list] of [...this.entries]) {
      let st;
      try {
        st = fs.statSync(file);
      } catch {
        st = undefined; // deleted (the host evicted the object): let go, so the tmpfs pages can be freed
      }
      if (!st || st.dev !== list[0].dev || st.ino !== list[0].ino || st.size !== list[0].size) {
        this._dropFile(file);
        continue;
      }
      for (const e of list.filter((x) => !x.inUse && now - x.lastUsed >= this.idleMs)) this._remove(e);
    }
    if (!this.entries.size) this._unschedule();
  }

  clear() {
    for (const file of [...this.entries.keys()]) this._dropFile(file);
    this._unschedule();
  }

  /**
   * Never lend this mapping again (e.g. its header was refused).
   * @param {MappingEntry} entry
   */
  discard(entry) {
    entry.inUse = false;
    this._remove(entry);
  }

  _evictOverCap() {
    if (this.bytes <= this.maxBytes) return;
    // Least recently used idle mappings first (by lastUsed over all files).
    const idle = [];
    for (const list of this.entries.values()) for (const e of list) if (!e.inUse) idle.push(e);
    idle.sort((a, b) => a.lastUsed - b.lastUsed);
    for (const e of idle) {
      if (this.bytes <= this.maxBytes) break;
      this._remove(e);
    }
  }

  /** @param {string} file */
  _dropFile(file) {
    for (const e of [...(this.entries.get(file) || [])]) this._remove(e);
  }

  /** @param {MappingEntry} entry */
  _remove(entry) {
    const list = this.entries.get(entry.file);
    if (!list) return;
    const i = list.indexOf(entry);
    if (i < 0) return;
    list.splice(i, 1);
    if (!list.length) this.entries.delete(entry.file);
    this.bytes -= entry.size;
    entry.cached = false; // an invocation holding it keeps its view; nothing lends it again
    this.stats.drops++;
    if (!this.entries.size) this._unschedule();
  }

  _schedule() {
    if (this._timer || !this.sweepMs) return;
    this._timer = setInterval(() => this.sweep(), this.sweepMs);
    this._timer.unref();
  }

  _unschedule() {
    if (this._timer) clearInterval(this._timer);
    this._timer = undefined;
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

// ---- writing ------------------------------------------------------------------------------------------

/**
 * Writes `data` into a new map (random flat name, mode 0600) in the first directory that takes it.
 * Content first, header last: a reader never sees "initialized" with partial content.
 * @param {Buffer} data
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {Promise<{ name: string, path: string, count: number }>}
 */
async function createMap(data, env = process.env) {
  const count = data.length;
  const errors = [];
  for (const dir of mapDirectories(env)) {
    const name = crypto.randomUUID().replace(/-/g, '');
    const file = path.join(dir, name);
    let fh;
    try {
      await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
      fh = await fsp.open(file, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o600);
    } catch (e) {
      errors.push(`${dir}: ${errorText(e)}`);
      continue;
    }
    try {
      let done = 0;
      while (done < count) {
        const { bytesWritten } = await fh.write(data, done, count - done, HEADER_SIZE + done);
        done += bytesWritten;
      }
      const header = Buffer.alloc(HEADER_SIZE);
      header[0] = INITIALIZED;
      header.writeBigInt64LE(BigInt(count), 1);
      await fh.write(header, 0, HEADER_SIZE, 0);
      await fh.close();
      return { name, path: file, count };
    } catch (e) {
      errors.push(`${dir}: ${errorText(e)}`); // e.g. ENOSPC on a full tmpfs: try the next directory
      await fh.close().catch(() => {});
      await fsp.unlink(file).catch(() => {});
    }
  }
  throw new SharedMemoryError(`cannot create a shared-memory map of ${count} bytes: ${errors.join('; ')}`);
}

/** @param {unknown} e */
function errorText(e) {
  return e instanceof Error ? /** @type {any} */ (e).code || e.message : String(e);
}

/** @param {string} file */
function unlinkQuietly(file) {
  try {
    fs.unlinkSync(file);
  } catch {
    // already gone
  }
}

// ---- the worker's handles -----------------------------------------------------------------------------

/**
 * The worker's handles: input regions opened per invocation, and output maps it created.
 *
 * Input maps belong to the host (its cachelet), so they are only ever let go of, never deleted. Output maps
 * are ours until the host takes them: with FunctionDataCache the host adopts the file and we only forget it;
 * without it the host copies the data out and we delete the file when asked.
 */
class SharedMemoryManager {
  /**
   * @param {{ mode?: 'mmap' | 'read', env?: NodeJS.ProcessEnv, pool?: BufferPool, mappings?: MappingCache }} [options]
   *   mode defaults to the process-wide one (FAASCACHE_NODE_SHM_MODE / probe)
   */
  constructor(options = {}) {
    /** @type {ModeInfo} */
    const info = options.mode ? (options.mode === 'mmap' ? requireMmap() : { mode: 'read', reason: 'chosen by the caller' }) : activeMode();
    /** @type {'mmap' | 'read'} */
    this.mode = info.mode;
    this.modeReason = info.reason;
    this._mmap = info.mmap;
    this._env = options.env;
    this.pool = options.pool || new BufferPool();
    /** @type {MappingCache | undefined} mmap mode: mappings kept across invocations */
    this.mappings = this.mode === 'mmap' ? options.mappings || new MappingCache({ mmap: this._mmap }) : undefined;
    /** @type {Map<string, { name: string, buffer: Buffer, entry?: MappingEntry }[]>} */
    this._inputs = new Map();
    /** @type {Map<string, { path: string, invocationId: string | undefined }>} */
    this._created = new Map();
  }

  get env() {
    return this._env || process.env;
  }

  /**
   * The Buffer of an input region, held until `releaseInvocation`.
   * @param {string} invocationId
   * @param {string} name
   * @param {number} offset
   * @param {number} count
   * @returns {Promise<Buffer>}
   */
  async openInput(invocationId, name, offset, count) {
    const { fd, file } = openMap(name, this.env);
    let buffer;
    /** @type {MappingEntry | undefined} */
    let entry;
    try {
      const st = fs.fstatSync(fd);
      const { size } = st;
      checkRegion(name, offset, count, size);
      if (this.mode === 'mmap' && this.mappings && size <= MMAP_MAX_LENGTH) {
        // The whole file, lent from the cache (the same mapping as the last invocation of this file).
        entry = this.mappings.acquire(file, fd, st);
        try {
          checkHeader(name, size, entry.buffer[0], entry.buffer.readBigInt64LE(1), offset, count);
        } catch (e) {
          this.mappings.discard(entry);
          throw e;
        }
        buffer = entry.buffer.subarray(HEADER_SIZE + offset, HEADER_SIZE + offset + count);
      } else if (this.mode === 'mmap') {
        buffer = mapRegion(this._mmap, name, fd, size, offset, count);
      }
      if (!buffer) {
        const content = this.pool.acquire(count);
        try {
          buffer = await readRegion(name, fd, size, offset, count, content);
        } catch (e) {
          this.pool.release(content);
          throw e;
        }
      }
    } finally {
      fs.closeSync(fd); // a mapping keeps its pages; the descriptor is not needed
    }
    const held = this._inputs.get(invocationId);
    if (held) held.push({ name, buffer, entry });
    else this._inputs.set(invocationId, [{ name, buffer, entry }]);
    return buffer;
  }

  /**
   * Lets go of the invocation's inputs (the files stay: the host owns them). Cached mappings become free for
   * the next invocation of the same file (others are unmapped when their Buffers are collected); pooled
   * Buffers go back to the pool.
   * @param {string} invocationId
   */
  releaseInvocation(invocationId) {
    const held = this._inputs.get(invocationId);
    this._inputs.delete(invocationId);
    for (const { buffer, entry } of held || []) {
      if (entry) this.mappings?.release(entry);
      else this.pool.release(buffer);
    }
  }

  /**
   * Writes an output map and remembers it until the host closes it.
   * @param {Buffer} data
   * @param {string} [invocationId]
   * @returns {Promise<{ name: string, count: number }>}
   */
  async put(data, invocationId) {
    const { name, path: file, count } = await createMap(data, this.env);
    this._created.set(name, { path: file, invocationId });
    return { name, count };
  }

  /**
   * Deletes maps we wrote for an invocation that then failed: the host never learns their names.
   * @param {Iterable<string>} names
   */
  discardCreated(names) {
    for (const name of names) {
      const created = this._created.get(name);
      this._created.delete(name);
      if (created) unlinkQuietly(created.path);
    }
  }

  /**
   * Answers CloseSharedMemoryResourcesRequest: true for each map we held and have now let go of.
   * @param {Iterable<string>} names
   * @param {boolean} deleteCreated false when the host's cache owns the files (FunctionDataCache)
   * @returns {Record<string, boolean>}
   */
  closeMaps(names, deleteCreated) {
    /** @type {Record<string, boolean>} */
    const results = {};
    for (const name of names) {
      const created = this._created.get(name);
      if (created) {
        this._created.delete(name);
        if (deleteCreated) unlinkQuietly(created.path);
        results[name] = true;
        continue;
      }
      let found = false;
      for (const [id, held] of this._inputs) { // forgotten only: the file is the host's
        const rest = held.filter((h) => h.name !== name);
        if (rest.length !== held.length) {
          found = true;
          this._inputs.set(id, rest);
        }
      }
      // The host is letting go of this map (a stock host deletes it next): drop our kept mapping of it.
      if (this.mappings?.dropName(name)) found = true;
      results[name] = found;
    }
    return results;
  }

  /** @param {string} invocationId */
  createdNamesFor(invocationId) {
    return [...this._created].filter(([, c]) => c.invocationId === invocationId).map(([name]) => name);
  }

  createdNames() {
    return [...this._created.keys()];
  }

  /**
   * At shutdown: let go of every input; delete our unclaimed outputs only when no host cache may own them.
   * @param {boolean} deleteCreated
   */
  closeAll(deleteCreated) {
    for (const id of [...this._inputs.keys()]) this.releaseInvocation(id);
    this.closeMaps(this.createdNames(), deleteCreated);
    this.pool.clear();
    this.mappings?.clear();
  }
}

/** @returns {ModeInfo} */
function requireMmap() {
  const current = activeMode();
  if (current.mode === 'mmap') return current;
  const probe = probeMmap();
  if (!probe.ok) throw new SharedMemoryError(`mmap mode asked for but ${probe.reason}`);
  return { mode: 'mmap', reason: `mmap-io ${probe.version}`, mmap: probe.mmap };
}

module.exports = {
  DIRECTORIES_SETTING,
  MODE_SETTING,
  POOL_SETTING,
  MAP_CACHE_SETTING,
  MAP_IDLE_SETTING,
  DEFAULT_MAP_CACHE_BYTES,
  DEFAULT_MAP_IDLE_MS,
  DEFAULT_ROOT,
  MAP_FOLDER,
  HEADER_SIZE,
  INITIALIZED,
  MIN_BYTES_FOR_SHARED_MEMORY,
  MAX_BYTES_FOR_SHARED_MEMORY,
  SharedMemoryError,
  SharedMemoryManager,
  BufferPool,
  MappingCache,
  roots,
  mapDirectories,
  validateMapName,
  openMap,
  createMap,
  probeMmap,
  detectMode,
  activeMode,
};

// `sharedMemory.mode` is 'mmap' or 'read': the process-wide input mode (detected on first access).
Object.defineProperty(module.exports, 'mode', { enumerable: true, get: () => activeMode().mode });
Object.defineProperty(module.exports, 'modeReason', { enumerable: true, get: () => activeMode().reason });
