'use strict';
/**
 * mmap mode: the input Buffer is mmap-io's mapping of the cachelet's map file, so nothing is copied (Faa$T's
 * local hit). The mapping is copy-on-write (MAP_PRIVATE, PROT_READ|PROT_WRITE) rather than a read-only shared
 * one: reads see the cachelet's pages, but a function that writes into its input gets a private copy of that
 * page instead of killing the worker with SIGSEGV (JavaScript cannot make a Buffer read-only) or corrupting the
 * cached object. Mappings are kept per map file across invocations (MappingCache); a file too large for mmap-io
 * is mapped per invocation up to the region's end (mapRegion), or read when even that is too long.
 */
const fs = require('node:fs');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { HEADER_SIZE, checkHeader } = require('./format');

const MAP_CACHE_SETTING = 'FAASCACHE_NODE_SHM_MAP_CACHE_BYTES';
const MAP_IDLE_SETTING = 'FAASCACHE_NODE_SHM_MAP_IDLE_MS';

// mmap-io passes the length as a C int.
const MMAP_MAX_LENGTH = 2 ** 31 - 1;
// mmap mode: mapped bytes kept across invocations (LRU over idle mappings), and how long an unused one stays.
const DEFAULT_MAP_CACHE_BYTES = 2 * 1024 * 1024 * 1024;
const DEFAULT_MAP_IDLE_MS = 60 * 1000;
// How often idle mappings are checked against their files (one stat each) and for age.
const MAP_SWEEP_MS = 1000;

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

module.exports = {
  MAP_CACHE_SETTING,
  MAP_IDLE_SETTING,
  DEFAULT_MAP_CACHE_BYTES,
  DEFAULT_MAP_IDLE_MS,
  MMAP_MAX_LENGTH,
  MappingCache,
  mapRegion,
};
