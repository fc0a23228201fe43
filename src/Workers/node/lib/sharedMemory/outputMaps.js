'use strict';
/**
 * Output maps: a new map per output (random flat name, mode 0600), which the host adopts (FaaSCache) or copies
 * out and lets us delete (stock host).
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const fsp = require('node:fs/promises');
const path = require('node:path');
const { HEADER_SIZE, INITIALIZED, SharedMemoryError, errorText } = require('./format');
const { mapDirectories } = require('./directories');

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

/** @param {string} file */
function unlinkQuietly(file) {
  try {
    fs.unlinkSync(file);
  } catch {
    // already gone
  }
}

module.exports = { createMap, unlinkQuietly };
