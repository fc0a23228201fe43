'use strict';
/**
 * The map file format of the Functions host's Linux layout (the C# `SharedMemoryMap`): byte 0 is 0x01
 * (initialized), bytes 1..8 the content length as a little-endian int64, content from byte 9. The checks here
 * refuse a malformed map or a region outside it with one message naming the map and the reason.
 */

const HEADER_SIZE = 9; // initialized flag + int64 content length
const INITIALIZED = 0x01;

// The stock host's window for shared-memory transfer (SharedMemoryConstants); FunctionDataCache lifts the minimum.
const MIN_BYTES_FOR_SHARED_MEMORY = 1024 * 1024;
const MAX_BYTES_FOR_SHARED_MEMORY = 2 * 1024 * 1024 * 1024 - 1;

/** A map is missing, malformed, or cannot be created; the message names the map and the reason. */
class SharedMemoryError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'SharedMemoryError';
  }
}

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
 * The content length a map's header declares, after the checks every input gets: the file holds the 9-byte
 * header, byte 0 is 0x01, and the length is neither negative nor beyond the file.
 * @param {string} name the map's name (for the message)
 * @param {Uint8Array} header the map's first bytes
 * @param {number} fileSize the map file's size
 * @returns {number}
 */
function parseHeader(name, header, fileSize) {
  if (fileSize < HEADER_SIZE || header.length < HEADER_SIZE) {
    throw new SharedMemoryError(`shared-memory map ${JSON.stringify(name)} is ${fileSize} bytes, shorter than its ${HEADER_SIZE}-byte header`);
  }
  const bytes = Buffer.from(header.buffer, header.byteOffset, HEADER_SIZE);
  const declared = bytes.readBigInt64LE(1);
  checkHeader(name, fileSize, bytes[0], declared, 0, 0);
  return Number(declared);
}

/** @param {unknown} e */
function errorText(e) {
  return e instanceof Error ? /** @type {any} */ (e).code || e.message : String(e);
}

module.exports = {
  HEADER_SIZE,
  INITIALIZED,
  MIN_BYTES_FOR_SHARED_MEMORY,
  MAX_BYTES_FOR_SHARED_MEMORY,
  SharedMemoryError,
  checkHeader,
  checkRegion,
  parseHeader,
  errorText,
};
