'use strict';
/**
 * HTTP trigger request and response objects of the function.json programming model (Functions v3 /
 * v4-classic): `req.method/url/headers/query/params/body/rawBody`, and `context.res` as a plain
 * `{ status, body, headers }` object or the fluent `HttpResponse` (`status()`, `setHeader()`, `send()`, ...).
 */
const { typedValue, tryJson } = require('./typedData');

/** @param {unknown} value */
function isBytes(value) {
  return Buffer.isBuffer(value) || ArrayBuffer.isView(value) || value instanceof ArrayBuffer;
}

/**
 * A Buffer over bytes-like data, without copying.
 * @param {ArrayBufferView | ArrayBuffer} value
 */
function asBuffer(value) {
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof ArrayBuffer) return Buffer.from(value);
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

/**
 * The body as the function sees it: JSON content types parsed, text as a string, binary as a Buffer.
 * @param {Buffer} bytes
 * @param {string} contentType
 */
function parseBody(bytes, contentType) {
  if (bytes.length === 0) return undefined;
  const ct = contentType.toLowerCase();
  if (ct.includes('json')) return tryJson(bytes.toString('utf8'));
  if (!ct || ct.startsWith('text/') || ct.includes('x-www-form-urlencoded') || ct.includes('xml') || ct.includes('javascript')) {
    return bytes.toString('utf8');
  }
  return bytes; // application/octet-stream, multipart/*, image/*, ...
}

/**
 * A map of the request: the nullable form when the host filled it (the worker advertises
 * UseNullableValueDictionaryForHttp, so a host may send only that one; a null value is ''), else the plain one.
 * @param {Record<string, any> | undefined} nullable map of NullableString
 * @param {Record<string, string> | undefined} plain
 * @returns {Record<string, string>}
 */
function requestMap(nullable, plain) {
  if (nullable && Object.keys(nullable).length) {
    /** @type {Record<string, string>} */
    const out = {};
    for (const [k, v] of Object.entries(nullable)) out[k] = v && v.value !== undefined && v.value !== null ? String(v.value) : '';
    return out;
  }
  return { ...(plain || {}) };
}

/** The request of an HTTP trigger (`req`, `context.req`). */
class HttpRequest {
  /** @param {any} http RpcHttp */
  constructor(http) {
    /** @type {Record<string, string>} header names in lower case */
    const headers = {};
    for (const [k, v] of Object.entries(requestMap(http.nullable_headers, http.headers))) headers[k.toLowerCase()] = String(v);
    let bytes = Buffer.alloc(0);
    for (const source of [http.body, http.rawBody]) {
      const { kind, value } = typedValue(source);
      if (kind === 'bytes') bytes = value;
      else if (kind === 'string' || kind === 'json') bytes = Buffer.from(value, 'utf8');
      else continue;
      break;
    }
    this.method = http.method || 'GET';
    this.url = http.url || '';
    this.originalUrl = this.url;
    this.headers = headers;
    /** @type {Record<string, string>} */
    this.query = requestMap(http.nullable_query, http.query);
    /** @type {Record<string, string>} route parameters */
    this.params = requestMap(http.nullable_params, http.params);
    /** Parsed per content-type: object for JSON, string for text, Buffer for binary; undefined when empty. */
    this.body = parseBody(bytes, headers['content-type'] || '');
    /** The body as a UTF-8 string (classic). */
    this.rawBody = bytes.length ? bytes.toString('utf8') : undefined;
    /** The body's bytes. */
    this.bufferBody = bytes;
    this.user = null;
  }

  /**
   * A request header, case-insensitively.
   * @param {string} field
   */
  get(field) {
    return this.headers[String(field).toLowerCase()];
  }
}

/** `context.res` as the worker creates it for an HTTP-triggered function. Every setter returns `this`. */
class HttpResponse {
  /** @param {() => void} done finishes a callback-style invocation (`send`, `end`, `json`, `sendStatus`) */
  constructor(done) {
    /** @type {Record<string, unknown>} */
    this.headers = {};
    /** @type {unknown} */
    this.body = undefined;
    /** @type {number | undefined} */
    this.statusCode = undefined;
    Object.defineProperty(this, '_done', { value: done, enumerable: false });
  }

  /** @param {number} statusCode */
  status(statusCode) {
    this.statusCode = statusCode;
    return this;
  }

  /**
   * @param {string} field
   * @param {unknown} value
   */
  setHeader(field, value) {
    this.headers[String(field).toLowerCase()] = value;
    return this;
  }

  /** @param {string} field */
  getHeader(field) {
    return this.headers[String(field).toLowerCase()];
  }

  /** @param {string} field */
  removeHeader(field) {
    delete this.headers[String(field).toLowerCase()];
    return this;
  }

  /** @param {string} type */
  type(type) {
    return this.setHeader('content-type', type);
  }

  /** @param {unknown} body */
  send(body) {
    this.body = body;
    /** @type {any} */ (this)._done();
    return this;
  }

  /** @param {unknown} [body] */
  end(body) {
    return this.send(body);
  }

  /** @param {unknown} body */
  json(body) {
    this.type('application/json');
    return this.send(body);
  }

  /** @param {number} statusCode */
  sendStatus(statusCode) {
    this.statusCode = statusCode;
    return this.send(undefined);
  }
}
/** @type {any} */ (HttpResponse.prototype).header = HttpResponse.prototype.setHeader;
/** @type {any} */ (HttpResponse.prototype).set = HttpResponse.prototype.setHeader;
/** @type {any} */ (HttpResponse.prototype).get = HttpResponse.prototype.getHeader;

/** The response value is not one we can send; the message says what is allowed. */
class HttpResponseError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'HttpResponseError';
  }
}

/**
 * @param {unknown} value
 * @returns {string | undefined}
 */
function statusOf(value) {
  if (typeof value === 'number' && Number.isInteger(value)) return String(value);
  if (typeof value === 'string' && /^\d{3}$/.test(value.trim())) return value.trim();
  return undefined;
}

/**
 * Body bytes and the content-type to use when the function set none.
 * @param {unknown} body
 * @returns {{ bytes: Buffer, contentType?: string }}
 */
function encodeBody(body) {
  if (body === undefined || body === null) return { bytes: Buffer.alloc(0) };
  if (isBytes(body)) return { bytes: asBuffer(/** @type {any} */ (body)), contentType: 'application/octet-stream' };
  if (typeof body === 'string') return { bytes: Buffer.from(body, 'utf8'), contentType: 'text/plain; charset=utf-8' };
  let text;
  try {
    text = JSON.stringify(body);
  } catch (e) {
    throw new HttpResponseError(`the HTTP response body is not JSON-serializable: ${e instanceof Error ? e.message : e}`);
  }
  if (text === undefined) throw new HttpResponseError(`the HTTP response body cannot be a ${typeof body}`);
  return { bytes: Buffer.from(text, 'utf8'), contentType: 'application/json' };
}

/**
 * RpcHttp for an HTTP output: `context.res`, a returned `{ status, body, headers }`, or a bare string/Buffer body.
 * The body always travels as bytes with a content-type (the function's, or one that fits the body).
 * @param {unknown} value
 */
function toRpcHttp(value) {
  /** @type {any} */
  let res = value;
  if (typeof value === 'string' || isBytes(value)) res = { body: value };
  if (typeof res !== 'object' || res === null) {
    throw new HttpResponseError(`an HTTP response must be an object like { status, body, headers }, a string or a Buffer, not ${typeof value}`);
  }
  const status = statusOf(res.statusCode) || statusOf(res.status) || '200';
  /** @type {Record<string, string>} */
  const headers = {};
  for (const [k, v] of Object.entries(res.headers || {})) {
    if (v === undefined || v === null) continue;
    headers[k] = Array.isArray(v) ? v.join(', ') : String(v);
  }
  const { bytes, contentType } = encodeBody(res.body);
  if (contentType && !Object.keys(headers).some((k) => k.toLowerCase() === 'content-type')) headers['content-type'] = contentType;
  return { status_code: status, headers, body: { bytes } };
}

module.exports = { requestMap, HttpRequest, HttpResponse, HttpResponseError, toRpcHttp, parseBody, isBytes, asBuffer };
