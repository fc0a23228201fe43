'use strict';
/** TypedData (the protocol's value union) to and from JavaScript values. */

const MEMBERS = ['string', 'json', 'bytes', 'stream', 'http', 'int', 'double', 'collection_bytes', 'collection_string', 'collection_double', 'collection_sint64'];

/**
 * @typedef {{ kind: 'none' | 'bytes' | 'string' | 'json' | 'http' | 'int' | 'double' | 'collection', value: any }} Typed
 */

/**
 * The member set in a TypedData, as (kind, value); bytes and stream are Buffers.
 * @param {any} td
 * @returns {Typed}
 */
function typedValue(td) {
  // Decoded messages name the member set (oneofs: true); objects built by hand just carry it.
  const which = td && (typeof td.data === 'string' ? td.data : MEMBERS.find((m) => td[m] !== undefined && td[m] !== null));
  if (!which || td[which] === undefined || td[which] === null) return { kind: 'none', value: undefined };
  const v = td[which];
  switch (which) {
    case 'bytes':
    case 'stream':
      return { kind: 'bytes', value: v };
    case 'collection_bytes':
      return { kind: 'collection', value: [...(v.bytes || [])] };
    case 'collection_string':
      return { kind: 'collection', value: [...(v.string || [])] };
    case 'collection_double':
      return { kind: 'collection', value: [...(v.double || [])] };
    case 'collection_sint64':
      return { kind: 'collection', value: [...(v.sint64 || [])] };
    default:
      return { kind: which, value: v };
  }
}

/**
 * JSON.parse when the text is JSON, else the text (the classic Node worker's rule for string data).
 * @param {string} text
 */
function tryJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A plain JavaScript value of a TypedData (used for trigger metadata: json is parsed, bytes stay Buffers).
 * @param {any} td
 */
function plainValue(td) {
  const { kind, value } = typedValue(td);
  if (kind === 'json') return tryJson(value);
  return value;
}

module.exports = { typedValue, tryJson, plainValue };
