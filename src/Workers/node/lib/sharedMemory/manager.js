'use strict';
/** The worker's shared-memory handles: inputs opened per invocation (in the mode in force), outputs it created. */
const fs = require('node:fs');
const { HEADER_SIZE, checkHeader, checkRegion } = require('./format');
const { openMap } = require('./directories');
const { activeMode, requireMmap } = require('./mode');
const { MMAP_MAX_LENGTH, MappingCache, mapRegion } = require('./mmapMode');
const { BufferPool, readRegion } = require('./readMode');
const { createMap, unlinkQuietly } = require('./outputMaps');

/** @typedef {import('./mode').ModeInfo} ModeInfo */
/** @typedef {import('./mmapMode').MappingEntry} MappingEntry */

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

module.exports = { SharedMemoryManager };
