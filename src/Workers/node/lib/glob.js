'use strict';
/**
 * package.json "main" as the real Node worker reads it: a glob pattern relative to the app folder (the real
 * worker uses globby 11 with `cwd` = the app folder). Supported: `*`, `?`, `[...]` (and `[!...]`), `**` for any
 * number of folders, `{a,b}` alternatives (nested too), and plain paths. As globby by default: only files (through
 * symbolic links), names starting with a dot only when the pattern spells the dot, paths relative to `cwd` with `/`.
 * The result is sorted, so the entry points load (and register their functions) in the same order every time.
 */
const fs = require('node:fs');
const path = require('node:path');

/** What makes a pattern dynamic, as fast-glob's isDynamicPattern (used by globby.hasMagic). */
const MAGIC = /[*?[\]{}]|[@!+]\(/;

/** @param {string} pattern */
function hasMagic(pattern) {
  return MAGIC.test(pattern);
}

/**
 * `a{b,c{d,e}}f` -> [abf, acdf, acef]; a brace without a comma at its level is literal.
 * @param {string} pattern
 * @returns {string[]}
 */
function expandBraces(pattern) {
  let depth = 0;
  let open = -1;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === '{') {
      if (depth === 0) open = i;
      depth++;
    } else if (c === '}' && depth > 0) {
      depth--;
      if (depth === 0) {
        const inner = pattern.slice(open + 1, i);
        const parts = splitTopLevel(inner);
        if (parts.length < 2) continue; // "{x}": literal
        const head = pattern.slice(0, open);
        const tail = pattern.slice(i + 1);
        return parts.flatMap((p) => expandBraces(head + p + tail));
      }
    }
  }
  return [pattern];
}

/**
 * Splits on commas that are not inside nested braces.
 * @param {string} text
 */
function splitTopLevel(text) {
  const parts = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === '{') depth++;
    else if (c === '}') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

/**
 * One path segment's pattern as a RegExp (no `/` inside a segment).
 * @param {string} segment
 */
function segmentRegExp(segment) {
  let out = '';
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i];
    if (c === '\\' && i + 1 < segment.length) {
      out += escapeRe(segment[++i]);
    } else if (c === '*') {
      out += '[^/]*';
    } else if (c === '?') {
      out += '[^/]';
    } else if (c === '[') {
      const close = segment.indexOf(']', i + 2);
      if (close < 0) {
        out += '\\[';
        continue;
      }
      let body = segment.slice(i + 1, close);
      if (body.startsWith('!')) body = `^${body.slice(1)}`;
      out += `[${body.replace(/\\/g, '\\\\')}]`;
      i = close;
    } else {
      out += escapeRe(c);
    }
  }
  return new RegExp(`^${out}$`);
}

/** @param {string} c */
function escapeRe(c) {
  return c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/**
 * @param {string} file
 * @returns {fs.Stats | undefined} following symbolic links; undefined when it does not exist or cannot be read
 */
function statOf(file) {
  try {
    return fs.statSync(file);
  } catch {
    return undefined;
  }
}

/**
 * @param {string} dir
 * @returns {string[]}
 */
function listDir(dir) {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

/**
 * Files under `base` matching `segments`, as paths relative to the pattern's start (`prefix`).
 * @param {string} base absolute folder
 * @param {string} prefix the same folder as the result should spell it ('' for cwd)
 * @param {string[]} segments what is left of the pattern
 * @param {Set<string>} found
 * @param {Set<string>} visiting real paths of the folders on the current `**` walk (no loops through links)
 */
function walk(base, prefix, segments, found, visiting) {
  if (segments.length === 0) return;
  const [segment, ...rest] = segments;
  const join = (/** @type {string} */ name) => (prefix ? `${prefix}/${name}` : name);
  if (segment === '**') {
    walk(base, prefix, rest, found, visiting); // zero folders
    let real;
    try {
      real = fs.realpathSync(base);
    } catch {
      return;
    }
    if (visiting.has(real)) return;
    visiting.add(real);
    for (const name of listDir(base)) {
      if (name.startsWith('.')) continue;
      const full = path.join(base, name);
      if (statOf(full)?.isDirectory()) walk(full, join(name), segments, found, visiting);
    }
    visiting.delete(real);
    return;
  }
  /**
   * The entry `name` of `base` matched `segment`: found when it is a file and the pattern ends here, else walked
   * into when it is a folder (as `nextPrefix`).
   * @param {string} name
   * @param {string} nextPrefix
   */
  const matched = (name, nextPrefix) => {
    const full = path.join(base, name);
    const st = statOf(full);
    if (!st) return;
    if (rest.length === 0) {
      if (st.isFile()) found.add(join(name));
    } else if (st.isDirectory()) {
      walk(full, nextPrefix, rest, found, visiting);
    }
  };
  if (!hasMagic(segment)) {
    const literal = segment.replace(/\\(.)/g, '$1');
    matched(literal, literal === '.' ? prefix : join(literal));
    return;
  }
  const re = segmentRegExp(segment);
  const dotAllowed = segment.startsWith('.');
  for (const name of listDir(base)) {
    if (name.startsWith('.') && !dotAllowed) continue;
    if (re.test(name)) matched(name, join(name));
  }
}

/**
 * The files matching `pattern` under `cwd`, relative to it with `/` separators, sorted.
 * @param {string} pattern
 * @param {string} cwd
 * @returns {string[]}
 */
function glob(pattern, cwd) {
  if (typeof pattern !== 'string' || !pattern.trim()) throw new TypeError('a glob pattern must be a non-empty string');
  /** @type {Set<string>} */
  const found = new Set();
  for (const p of expandBraces(pattern.trim())) {
    if (p.startsWith('/')) { // absolute: matched from the root, returned absolute
      /** @type {Set<string>} */
      const absolute = new Set();
      walk('/', '', p.split('/').filter((s) => s !== ''), absolute, new Set());
      for (const f of absolute) found.add(`/${f}`);
      continue;
    }
    walk(cwd, '', p.split('/').filter((s) => s !== '' && s !== '.'), found, new Set());
  }
  return [...found].sort();
}

module.exports = { glob, hasMagic, expandBraces };
