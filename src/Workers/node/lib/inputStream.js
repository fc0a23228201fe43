'use strict';
/**
 * A blob input as a Readable stream over its Buffer (function.json `"dataType": "stream"`).
 *
 * The chunks are slices of the Buffer, so nothing is copied: in mmap mode the stream reads the cachelet's
 * pages directly. `getBuffer()` (a FaaSCache extension, like the Python worker's `InputStream.getbuffer()`)
 * hands out the whole Buffer for code that can work on one.
 */
const { Readable } = require('node:stream');

const CHUNK_BYTES = 1024 * 1024;

class InputStream extends Readable {
  /**
   * @param {Buffer} buffer
   * @param {{ name?: string, uri?: string, chunkSize?: number }} [options] name/uri from a blob trigger's metadata
   */
  constructor(buffer, options = {}) {
    super({ highWaterMark: options.chunkSize || CHUNK_BYTES });
    this._buffer = buffer;
    this._position = 0;
    this._chunk = options.chunkSize || CHUNK_BYTES;
    /** Blob path (container/blob) when the host told us. */
    this.name = options.name;
    /** Blob URI when the host told us. */
    this.uri = options.uri;
    /** Content length in bytes. */
    this.length = buffer.length;
  }

  /** @param {number} size */
  _read(size) {
    if (this._position >= this._buffer.length) {
      this.push(null);
      return;
    }
    const end = Math.min(this._buffer.length, this._position + Math.max(size, this._chunk));
    const chunk = this._buffer.subarray(this._position, end);
    this._position = end;
    this.push(chunk);
  }

  /** The whole content as a Buffer, without copying (valid for the invocation). */
  getBuffer() {
    return this._buffer;
  }

  /** True while nothing has been read: the whole Buffer can be passed on as is. */
  get untouched() {
    return this._position === 0 && !this.readableDidRead;
  }
}

module.exports = { InputStream, CHUNK_BYTES };
