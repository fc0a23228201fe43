'use strict';
/** The loader: which export is the function, and load errors that name the file and the reason. */
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { test } = require('node:test');
const { loadFunction, FunctionLoadError } = require('../lib/loader');

/**
 * Writes <tmp>/<name>/<file> and returns the metadata a host would send for it.
 * @param {import('node:test').TestContext} t
 * @param {string} file
 * @param {string} source
 * @param {{ scriptFile?: string, entryPoint?: string, extra?: Record<string, string> }} [options]
 * @returns {import('../lib/loader').FunctionMetadata}
 */
function fn(t, file, source, options = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'faascache-loader-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, file), source);
  for (const [name, text] of Object.entries(options.extra || {})) fs.writeFileSync(path.join(dir, name), text);
  return {
    functionId: 'id',
    name: 'Fn',
    directory: dir,
    scriptFile: options.scriptFile === undefined ? path.join(dir, file) : options.scriptFile,
    entryPoint: options.entryPoint,
    bindings: [
      { name: 'req', type: 'httpTrigger', direction: 'in', dataType: 'undefined' },
      { name: 'inputblob', type: 'blob', direction: 'in', dataType: 'binary' },
      { name: 'outputblob', type: 'blob', direction: 'out', dataType: 'undefined' },
      { name: '$return', type: 'http', direction: 'out', dataType: 'undefined' },
    ],
  };
}

/**
 * @param {import('../lib/loader').FunctionMetadata} meta
 * @param {RegExp} pattern
 */
async function fails(meta, pattern) {
  await assert.rejects(loadFunction(meta), (e) => {
    assert.ok(e instanceof FunctionLoadError, `a FunctionLoadError, not ${e}`);
    assert.match(e.message, /^cannot load function 'Fn': /);
    assert.match(e.message, pattern);
    return true;
  });
}

test('module.exports = async function: the function, with bindings split into inputs, outputs and $return', async (t) => {
  const loaded = await loadFunction(fn(t, 'index.js', 'module.exports = async function (context, req) { return 1; };', { scriptFile: '' }));
  assert.equal(await loaded.fn({}, {}), 1);
  assert.equal(loaded.moduleKind, 'commonjs');
  assert.deepEqual(loaded.inputs.map((b) => b.name), ['req', 'inputblob']);
  assert.deepEqual(loaded.outputs.map((b) => b.name), ['outputblob']);
  assert.equal(loaded.returnBinding?.name, '$return');
  assert.match(loaded.scriptPath, /index\.js$/, 'scriptFile defaults to index.js');
});

test('entryPoint, the single exported function, run or index', async (t) => {
  const entry = await loadFunction(fn(t, 'a.js', 'exports.helper = 1; exports.go = () => "go";', { entryPoint: 'go' }));
  assert.equal(entry.fn(), 'go');
  const single = await loadFunction(fn(t, 'b.js', 'exports.only = () => "only"; exports.value = 3;'));
  assert.equal(single.fn(), 'only');
  const run = await loadFunction(fn(t, 'c.js', 'exports.helper = () => 0; exports.run = () => "run";'));
  assert.equal(run.fn(), 'run');
  const index = await loadFunction(fn(t, 'd.cjs', 'exports.helper = () => 0; exports.index = () => "index";'));
  assert.equal(index.fn(), 'index');
  const transpiled = await loadFunction(fn(t, 'e.js', 'Object.defineProperty(exports, "__esModule", { value: true }); exports.default = () => "default";'));
  assert.equal(transpiled.fn(), 'default');
});

test('ESM: .mjs default and named exports, and .js in a "type": "module" package', async (t) => {
  const mjs = await loadFunction(fn(t, 'index.mjs', 'export default async function (context) { return "esm"; }'));
  assert.equal(mjs.moduleKind, 'esm');
  assert.equal(await mjs.fn(), 'esm');
  const named = await loadFunction(fn(t, 'h.mjs', 'export const helper = 1; export async function handler() { return "named"; }'));
  assert.equal(await named.fn(), 'named');
  const typeModule = await loadFunction(fn(t, 'index.js', 'export default () => "type module";', { extra: { 'package.json': '{"type": "module"}' } }));
  assert.equal(typeModule.moduleKind, 'esm');
  assert.equal(typeModule.fn(), 'type module');
});

test('a missing script file', async (t) => {
  const meta = fn(t, 'index.js', 'module.exports = () => {};', { scriptFile: 'missing.js' });
  await fails(meta, new RegExp(`script file ${path.join(meta.directory, 'missing.js').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} does not exist \\(function.json "scriptFile" is "missing.js"`));
});

test('a syntax error names the file and the line, CommonJS and ESM', async (t) => {
  const cjs = fn(t, 'index.js', 'module.exports = async function (context) {\n  const x = ;\n};\n');
  await fails(cjs, new RegExp(`syntax error in ${cjs.scriptFile?.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, line 2: Unexpected token`));
  const esm = fn(t, 'index.mjs', 'export default function (context) {\n\n  return (;\n}\n');
  await fails(esm, /syntax error in .*index\.mjs, line 3: Unexpected token/);
  const nested = fn(t, 'index.js', 'module.exports = require("./helper");', { extra: { 'helper.js': 'module.exports = (\n' } });
  await fails(nested, /syntax error in .*helper\.js, line 2: Unexpected end of input/);
});

test('no function exported, several without run/index, a non-function entry point', async (t) => {
  await fails(fn(t, 'index.js', 'module.exports = { answer: 42 };'), /index\.js exports no function \(module\.exports is an object\); export it, e\.g\. module\.exports = async function/);
  await fails(fn(t, 'index.js', '// nothing'), /exports no function/);
  await fails(fn(t, 'index.mjs', 'export const x = 1;'), /exports no function \(no default or named function export\)/);
  await fails(fn(t, 'index.js', 'exports.a = () => 1; exports.b = () => 2;'), /exports several functions \(a, b\); name the one to run with function\.json "entryPoint"/);
  await fails(fn(t, 'index.js', 'exports.a = () => 1;', { entryPoint: 'main' }), /has no export 'main' \(function\.json "entryPoint"\)/);
  await fails(fn(t, 'index.js', 'exports.main = 5;', { entryPoint: 'main' }), /export 'main' of .* is a number, not a function/);
});

test('a script that throws while loading, and a file that is not JavaScript', async (t) => {
  await fails(fn(t, 'index.js', 'require("no-such-package-here");'), /loading .*index\.js threw Error: Cannot find module 'no-such-package-here'/);
  await fails(fn(t, 'index.js', 'throw new RangeError("bad top level");'), /threw RangeError: bad top level/);
  await fails(fn(t, 'run.py', 'def main(): pass'), /run\.py is not a JavaScript file \(\.js, \.mjs, \.cjs\)/);
});
