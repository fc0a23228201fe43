'use strict';
/**
 * The conformance fixtures' matchers, shared by the language runners' rules (see the fixtures' README):
 * `{{var}}` placeholders, `$capture`, `$absent`, `$utf8`, `$json`, `$contains`, `$per_language`, and for the
 * conversations with the real workers the binding of a `{{var}}` that is not bound yet.
 */
const assert = require('node:assert/strict');

const LANGUAGE = 'node';

/**
 * The variable's name when `value` is a string that is exactly one `{{var}}`.
 * @param {unknown} value
 * @returns {string | undefined}
 */
function placeholder(value) {
  const whole = typeof value === 'string' ? /^\{\{([^{}]+)\}\}$/.exec(value) : null;
  return whole ? whole[1] : undefined;
}

/**
 * {{var}} placeholders in strings and keys; a string that is exactly one placeholder keeps its type.
 * @param {any} value
 * @param {Record<string, any>} variables
 * @returns {any}
 */
function substitute(value, variables) {
  if (Array.isArray(value)) return value.map((v) => substitute(v, variables));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [substitute(k, variables), substitute(v, variables)]));
  }
  if (typeof value === 'string' && value.includes('{{')) {
    const whole = /^\{\{([^{}]+)\}\}$/.exec(value);
    if (whole) {
      assert.ok(whole[1] in variables, `unknown placeholder ${value}`);
      return variables[whole[1]];
    }
    const replaced = value.replace(/\{\{([^{}]+)\}\}/g, (_, name) => {
      assert.ok(name in variables, `unknown placeholder {{${name}}}`);
      return String(variables[name]);
    });
    return replaced;
  }
  return value;
}

/** @param {unknown} value */
function isDefault(value) {
  if (value === undefined || value === null || value === '' || value === 0 || value === false) return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(/** @type {object} */ (value)).length === 0;
}

/**
 * A decoded message as proto3 JSON: Buffers become base64 text (as the Python runner sees bytes).
 * @param {any} value
 * @returns {any}
 */
function asJson(value) {
  if (Buffer.isBuffer(value)) return value.toString('base64');
  if (Array.isArray(value)) return value.map(asJson);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, asJson(v)]));
  return value;
}

/**
 * Checks `actual` (a message as proto3 JSON) against a fixture matcher; see the fixtures' README. With `bind` (the
 * conversations), a value or key that is exactly an unbound `{{var}}` binds it to what it meets.
 * @param {any} expected
 * @param {any} actual
 * @param {Record<string, any>} variables
 * @param {string} where
 * @param {boolean} [bind]
 */
function match(expected, actual, variables, where, bind = false) {
  if (expected && typeof expected === 'object' && !Array.isArray(expected)) {
    const keys = Object.keys(expected);
    if (keys.length === 1 && keys[0].startsWith('$')) {
      const [op, arg] = [keys[0], expected[keys[0]]];
      switch (op) {
        case '$capture':
          assert.ok(!isDefault(actual), `${where}: nothing to capture as ${arg}`);
          variables[arg] = actual;
          return;
        case '$absent':
          assert.ok(isDefault(actual), `${where}: expected unset, got ${JSON.stringify(actual)}`);
          return;
        case '$utf8':
          match(arg, Buffer.from(actual || '', 'base64').toString('utf8'), variables, where, bind);
          return;
        case '$json':
          assert.equal(typeof actual, 'string', `${where}: expected JSON text, got ${JSON.stringify(actual)}`);
          assert.deepEqual(JSON.parse(actual), arg, `${where}: ${actual} is not the JSON ${JSON.stringify(arg)}`);
          return;
        case '$contains':
          for (const text of Array.isArray(arg) ? arg : [arg]) {
            assert.ok(typeof actual === 'string' && actual.includes(text), `${where}: ${JSON.stringify(text)} not in ${JSON.stringify(actual)}`);
          }
          return;
        case '$per_language':
          match(arg[LANGUAGE], actual, variables, where, bind);
          return;
        default:
          throw new Error(`${where}: unknown matcher ${op}`);
      }
    }
    const object = actual === undefined || actual === null ? {} : actual;
    assert.ok(typeof object === 'object' && !Array.isArray(object), `${where}: expected an object, got ${JSON.stringify(actual)}`);
    for (const [key, value] of Object.entries(expected)) {
      const unbound = placeholder(key);
      if (bind && unbound !== undefined && !(unbound in variables)) {
        const keys = Object.keys(object);
        assert.equal(keys.length, 1, `${where}: cannot bind ${key} from the keys ${JSON.stringify(keys)}`);
        variables[unbound] = keys[0];
      }
      const name = substitute(key, variables);
      match(value, object[name], variables, `${where}.${name}`, bind);
    }
    return;
  }
  if (Array.isArray(expected)) {
    const list = actual === undefined || actual === null ? [] : actual;
    assert.ok(Array.isArray(list) && list.length === expected.length, `${where}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
    expected.forEach((e, i) => match(e, list[i], variables, `${where}[${i}]`, bind));
    return;
  }
  const unbound = placeholder(expected);
  if (bind && unbound !== undefined && !(unbound in variables)) {
    assert.ok(!isDefault(actual), `${where}: nothing to bind ${expected} to`);
    variables[unbound] = actual;
    return;
  }
  const wanted = substitute(expected, variables);
  if (actual === undefined || actual === null) {
    assert.ok(isDefault(wanted), `${where}: expected ${JSON.stringify(wanted)}, the field is unset`);
  } else if (typeof wanted === 'number' && typeof actual === 'string') {
    assert.equal(Number(actual), wanted, `${where}: expected ${wanted}, got ${actual}`); // int64 as JSON text
  } else {
    assert.equal(actual, wanted, `${where}: expected ${JSON.stringify(wanted)}, got ${JSON.stringify(actual)}`);
  }
}

module.exports = { placeholder, substitute, isDefault, asJson, match };
