'use strict';
/**
 * The cross-language conformance fixtures (src/Workers/conformance/*.json and real-workers/*.json), run against this
 * worker.
 *
 * The Python worker's tests/test_conformance.py runs the same files; ../conformance/README.md describes them.
 */
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { PassThrough, Readable } = require('node:stream');
const { test, describe } = require('node:test');
const { decodeInput } = require('../lib/bindings');
const { Dispatcher } = require('../lib/dispatcher');
const { HttpRequest } = require('../lib/http');
const { InputStream } = require('../lib/inputStream');
const { RpcLogger } = require('../lib/logging');
const protos = require('../lib/protos');
const shm = require('../lib/sharedMemory');
const { WORKER_DIR, makeShmRoot, writeHostMap, functionLoadRequest } = require('../test-support/helpers');
const { substitute, asJson, match } = require('../test-support/fixtureMatch');
const { Inbox } = require('../test-support/inbox');

const LANGUAGE = 'node';
const CONFORMANCE = path.resolve(WORKER_DIR, '..', 'conformance');
const APPS = path.join(CONFORMANCE, 'apps');
/** The Node.js v4 programming model app (`{{app_v4}}`); its @azure/functions comes from scripts/setup.d/node-apps.sh. */
const APPS_V4 = path.join(CONFORMANCE, 'apps-v4');
/** The real workers' conversations and their apps (real-workers/apps/node-v4 has its own @azure/functions). */
const REAL_WORKERS = path.join(CONFORMANCE, 'real-workers');
const KINDS = ['map_headers', 'input_decoding', 'message_scripts', 'conversations'];
const TIMEOUT_MS = 10_000;
const mmapProbe = shm.probeMmap();
const { eventStream } = protos.load();

// ---- the fixture files --------------------------------------------------------------------------------

/** @returns {{ file: string, fixture: any }[]} the fixture files of the folder, then those of real-workers/ */
function fixtureFiles() {
  return [CONFORMANCE, REAL_WORKERS].flatMap((dir) => fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort()
    .map((f) => ({ file: path.relative(CONFORMANCE, path.join(dir, f)), fixture: JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) })));
}

/**
 * Every case of `kind` in every fixture file that applies to this language.
 * @param {string} kind
 * @param {string} [section]
 * @returns {{ title: string, c: any }[]}
 */
function cases(kind, section = 'cases') {
  const found = [];
  for (const { file, fixture } of fixtureFiles()) {
    if (fixture.kind !== kind) continue;
    for (const c of fixture[section] || []) {
      if ((c.languages || [LANGUAGE]).includes(LANGUAGE)) found.push({ title: `${path.basename(file, '.json')}: ${c.name}`, c });
    }
  }
  return found;
}

test('the v4 app apps-v4 brings @azure/functions 4.16.5 in its node_modules (bash scripts/setup.d/node-apps.sh installs it)', () => {
  const pkg = path.join(APPS_V4, 'node_modules', '@azure', 'functions', 'package.json');
  assert.ok(fs.existsSync(pkg), `${pkg} is missing: run bash scripts/setup.d/node-apps.sh`);
  assert.equal(JSON.parse(fs.readFileSync(pkg, 'utf8')).version, '4.16.5');
});

test('every fixture file is of a known kind', () => {
  const files = fixtureFiles();
  assert.ok(files.length, `no fixture files in ${CONFORMANCE}`);
  assert.ok(files.some(({ file }) => path.dirname(file) === 'real-workers'), `no fixture files in ${REAL_WORKERS}`);
  for (const { file, fixture } of files) assert.ok(KINDS.includes(fixture.kind), `${file}: kind ${JSON.stringify(fixture.kind)} is not one of ${KINDS}`);
});

/**
 * A { python, node } pair's entry for this language; anything else as it is.
 * @param {any} value
 */
function forLanguage(value) {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const keys = Object.keys(value);
    if (keys.length && keys.every((k) => k === 'python' || k === 'node')) return value[LANGUAGE];
  }
  return value;
}

/**
 * A function checking that an error's message holds the fixture's substrings (a string, a per-language pair,
 * or a list of those).
 * @param {any} spec
 */
function errorMatching(spec) {
  const texts = (Array.isArray(spec) ? spec : [spec]).map(forLanguage);
  return (/** @type {unknown} */ e) => {
    const message = e instanceof Error ? e.message : String(e);
    for (const text of texts) assert.ok(message.includes(text), `expected ${JSON.stringify(text)} in the error: ${message}`);
    return true;
  };
}

/** @param {{ utf8?: string, repeat?: string, times?: number }} spec */
function contentOf(spec) {
  if (spec.repeat !== undefined) return Buffer.from(spec.repeat.repeat(/** @type {number} */ (spec.times)), 'utf8');
  return Buffer.from(/** @type {string} */ (spec.utf8), 'utf8');
}

/**
 * A private shared-memory root, removed after the test.
 * @param {import('node:test').TestContext} t
 */
function root(t) {
  const r = makeShmRoot();
  t.after(r.remove);
  return { ...r, env: { [shm.DIRECTORIES_SETTING]: r.root } };
}

/**
 * A fixture's message JSON as protobuf.js takes it: {"$utf8": text} becomes the base64 of the text's bytes.
 * @param {any} value
 * @returns {any}
 */
function toWireJson(value) {
  if (Array.isArray(value)) return value.map(toWireJson);
  if (value && typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.length === 1 && keys[0] === '$utf8') return Buffer.from(value.$utf8, 'utf8').toString('base64');
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toWireJson(v)]));
  }
  return value;
}

/**
 * A StreamingMessage as it arrives from the other end: serialized and decoded again (the wire form).
 * @param {Record<string, unknown>} content
 */
function overTheWire(content) {
  return eventStream.responseDeserialize(eventStream.requestSerialize({ request_id: 'conformance', ...content }));
}

// ---- map headers --------------------------------------------------------------------------------------

for (const mode of /** @type {const} */ (['mmap', 'read'])) {
  describe(`map headers, ${mode} mode`, { skip: mode === 'mmap' && !mmapProbe.ok && `mmap-io unavailable: ${!mmapProbe.ok && mmapProbe.reason}` }, () => {
    for (const { title, c } of cases('map_headers')) {
      test(title, async (t) => {
        const r = root(t);
        const raw = Buffer.from(c.file_hex.replace(/\s+/g, ''), 'hex');
        const name = 'conformance-map';
        fs.writeFileSync(path.join(r.dir, name), raw);
        if (c.error !== undefined) assert.throws(() => shm.parseHeader(name, raw, raw.length), errorMatching(c.error));
        else assert.equal(shm.parseHeader(name, raw, raw.length), c.content_length);
        const m = new shm.SharedMemoryManager({ mode, env: r.env });
        try {
          for (const region of c.regions) {
            const error = region.error !== undefined ? region.error : c.error;
            if (error !== undefined) {
              await assert.rejects(m.openInput('inv', name, region.offset, region.count), errorMatching(error));
            } else {
              const content = await m.openInput('inv', name, region.offset, region.count);
              assert.equal(content.toString('utf8'), region.utf8);
            }
          }
        } finally {
          m.closeAll(false);
        }
      });
    }
    for (const { title, c } of cases('map_headers', 'names')) {
      test(title, async (t) => {
        const r = root(t);
        const m = new shm.SharedMemoryManager({ mode, env: r.env });
        await assert.rejects(m.openInput('inv', c.map_name, 0, 0), errorMatching(c.error));
        m.closeAll(false);
      });
    }
  });
}

// ---- input decoding -----------------------------------------------------------------------------------

/**
 * The language-neutral shape of what a function received (see the fixtures' README).
 * @param {unknown} value
 * @returns {Promise<Record<string, unknown>>}
 */
async function describeValue(value) {
  if (value instanceof InputStream) {
    assert.ok(value instanceof Readable);
    const throughBuffer = value.getBuffer().toString('utf8');
    const chunks = [];
    for await (const chunk of value) chunks.push(chunk);
    const read = Buffer.concat(chunks).toString('utf8');
    assert.equal(read, throughBuffer, 'reading the stream and getBuffer() disagree');
    return { type: 'stream', utf8: read, length: value.length, name: value.name ?? null, uri: value.uri ?? null };
  }
  if (value instanceof HttpRequest) return { type: 'http', method: value.method, url: value.url };
  if (Buffer.isBuffer(value)) return { type: 'binary', utf8: value.toString('utf8') };
  if (typeof value === 'string') return { type: 'text', value };
  if (typeof value === 'number') return { type: 'number', value };
  if (value === undefined || value === null) return { type: 'none' };
  if (typeof value === 'object') return { type: 'json', value };
  throw new Error(`the function received a ${typeof value}, which no fixture shape describes`);
}

describe('input decoding', () => {
  for (const { title, c } of cases('input_decoding')) {
    test(title, async (t) => {
      const r = root(t);
      const manager = new shm.SharedMemoryManager({ env: r.env });
      t.after(() => manager.closeAll(true));
      /** @type {Record<string, unknown>} */
      const binding = { name: 'x' };
      if (c.input.shared_memory) {
        const content = contentOf(c.input.shared_memory);
        binding.rpc_shared_memory = { name: writeHostMap(r.root, content), offset: 0, count: content.length, type: c.input.shared_memory.type };
      } else if (c.input.data) {
        binding.data = c.input.data;
      }
      const request = overTheWire({
        invocation_request: toWireJson({ invocation_id: 'inv', input_data: [binding], trigger_metadata: c.trigger_metadata || {} }),
      }).invocation_request;
      /** @type {import('../lib/bindings').BindingSpec | undefined} */
      const spec = c.binding ? { name: 'x', type: c.binding.type, direction: 'in', dataType: c.binding.data_type, properties: {} } : undefined;
      const expected = forLanguage(c.expect);
      const decoding = decodeInput(spec, request.input_data[0], { invocationId: 'inv', shm: manager, triggerMetadata: request.trigger_metadata });
      if (expected.error !== undefined) {
        await assert.rejects(decoding, errorMatching(expected.error));
      } else {
        const actual = await describeValue(await decoding);
        assert.deepEqual(Object.fromEntries(Object.keys(expected).map((k) => [k, actual[k]])), expected);
      }
      manager.releaseInvocation('inv');
    });
  }
});

// ---- message scripts ----------------------------------------------------------------------------------

/**
 * @param {Record<string, any>} step
 * @param {string} dir the shared-memory root's AzureFunctions folder
 */
function checkMap(step, dir) {
  const file = path.join(dir, step.name);
  if (step.exists === false) {
    assert.ok(!fs.existsSync(file), `${file} should be gone`);
    return;
  }
  const raw = fs.readFileSync(file);
  assert.ok(raw[0] === 0x01 && Number(raw.readBigInt64LE(1)) === raw.length - 9, `${file}: bad header`);
  if (step.utf8 !== undefined || step.repeat !== undefined) assert.ok(raw.subarray(9).equals(contentOf(step)), `${file}: unexpected content`);
  if (step.mode !== undefined) assert.equal((fs.statSync(file).mode & 0o777).toString(8), step.mode);
}

/**
 * A case's surroundings: a private shared-memory root, the case's `env` (restored after the test), and its
 * `host_maps` written there as `{{var}}` and `{{var.count}}`.
 * @param {import('node:test').TestContext} t
 * @param {any} c
 * @param {Record<string, any>} variables
 */
function caseSetting(t, c, variables) {
  const r = root(t);
  /** @type {Record<string, string>} */
  const env = { ...(c.env || {}), [shm.DIRECTORIES_SETTING]: r.root };
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  t.after(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
  for (const [name, spec] of Object.entries(c.host_maps || {})) {
    const content = contentOf(/** @type {any} */ (spec));
    variables[name] = writeHostMap(r.root, content);
    variables[`${name}.count`] = content.length;
  }
  return r;
}

/** A fresh dispatcher whose messages (logs included) go, as the host decodes them, to an Inbox. */
function inProcessDispatcher() {
  const logger = new RpcLogger({ stderr: new PassThrough() });
  const dispatcher = new Dispatcher(
    { host: '127.0.0.1', port: 1, workerId: 'conformance-worker', requestId: 'conformance', maxMessageLength: 1 << 30, target: '127.0.0.1:1' },
    { logger },
  );
  const inbox = new Inbox(TIMEOUT_MS);
  dispatcher.send = (content) => inbox.push(overTheWire(content));
  logger.connect((content) => dispatcher.send(content));
  return {
    dispatcher,
    inbox,
    close() {
      logger.disconnect();
      dispatcher.shm.closeAll(!dispatcher.policy.functionDataCache); // as run() does at exit
    },
  };
}

describe('message scripts', () => {
  for (const { title, c } of cases('message_scripts')) {
    test(title, async (t) => {
      /** @type {Record<string, any>} */
      const variables = { app: APPS, app_v4: APPS_V4 };
      const r = caseSetting(t, c, variables);
      const { dispatcher, inbox, close } = inProcessDispatcher();
      try {
        let number = 0;
        for (const step of c.steps) {
          number++;
          if (step.check_map) {
            checkMap(substitute(step.check_map, variables), r.dir);
            continue;
          }
          const content = step.load
            ? { function_load_request: functionLoadRequest(step.load.function, step.load.function_id, APPS) }
            : toWireJson(substitute(step.send, variables));
          dispatcher.dispatch(overTheWire(content));
          for (const expected of step.expect || []) {
            const [[kind, matcher]] = Object.entries(expected);
            const sent = await inbox.next(kind);
            assert.equal(sent.content, kind, `step ${number}: expected ${kind}, got ${JSON.stringify(asJson(sent)).slice(0, 500)}`);
            match(matcher, asJson(sent[kind]), variables, `step ${number} ${kind}`);
          }
        }
      } finally {
        close();
      }
    });
  }
});

// ---- conversations with the real workers ---------------------------------------------------------------

/** The player's steps (the host's HTTP side, the real worker's own maps): nothing to do against our worker. */
const CONVERSATION_NOOPS = ['worker_map', 'read_map', 'http', 'http_done'];
/** After the last step: how long the worker must stay silent to show it has nothing more to say. */
const QUIET_MS = 200;

/**
 * A message the runner sends as the host: each {{var}} filled in, an unbound one with the case's `vars` default
 * (which binds it for the later steps); a placeholder that has neither is the fixture's error.
 * @param {any} value
 * @param {Record<string, any>} variables
 * @param {Record<string, any>} defaults
 * @param {string} where
 */
function concrete(value, variables, defaults, where) {
  for (const [, name] of JSON.stringify(value).matchAll(/\{\{([^{}]+)\}\}/g)) {
    if (name in variables) continue;
    assert.ok(name in defaults, `${where}: {{${name}}} is unbound and the case's vars give no default`);
    variables[name] = defaults[name];
  }
  return substitute(value, variables);
}

/**
 * The FunctionLoadRequest a host sends for an entry of the worker's FunctionMetadataResponse: name, directory,
 * script_file, entry_point, raw_bindings and properties as returned, and the bindings rebuilt from the raw ones
 * (type, direction, dataType, read without regard to case).
 * @param {any} meta
 * @param {string} functionId
 */
function loadFromMetadata(meta, functionId) {
  /** @type {Record<string, unknown>} */
  const bindings = {};
  for (const raw of meta.raw_bindings) {
    const b = JSON.parse(raw);
    bindings[b.name] = { type: b.type, direction: String(b.direction || 'in').toLowerCase(), data_type: String(b.dataType || 'undefined').toLowerCase() };
  }
  return {
    function_id: functionId,
    metadata: {
      name: meta.name,
      directory: meta.directory,
      script_file: meta.script_file,
      entry_point: meta.entry_point,
      raw_bindings: [...meta.raw_bindings],
      properties: { ...(meta.properties || {}) },
      bindings,
    },
  };
}

describe('conversations with the real workers', () => {
  test('a variable binds when matched and takes its default when sent', () => {
    /** @type {Record<string, any>} */
    const variables = {};
    match({ results: { '{{output}}': true }, id: '{{inv}}' }, { results: { 'map-1': true }, id: 'inv-7' }, variables, 'm', true);
    assert.deepEqual(variables, { output: 'map-1', inv: 'inv-7' });
    match('{{inv}}', 'inv-7', variables, 'm', true); // bound: compared from now on
    assert.throws(() => match('{{inv}}', 'inv-8', variables, 'm', true));
    assert.throws(() => match('{{other}}', '', variables, 'm', true), /nothing to bind/);
    assert.throws(() => match({ '{{other}}': true }, { a: true, b: true }, variables, 'm', true), /cannot bind/);
    assert.throws(() => match('{{other}}', 'x', variables, 'm'), /unknown placeholder/); // message scripts: the fixture's error
    assert.deepEqual(concrete({ invocation_id: '{{inv}}', id: '{{fid}}' }, variables, { fid: 'f-1' }, 's'), { invocation_id: 'inv-7', id: 'f-1' });
    assert.deepEqual(variables, { output: 'map-1', inv: 'inv-7', fid: 'f-1' });
    assert.throws(() => concrete({ name: '{{nothing}}' }, variables, {}, 's'), /no default/);
  });

  const found = cases('conversations');
  test('the real Node.js worker\'s conversations are run here', () => {
    assert.ok(found.length, 'no conversation lists node in its languages');
  });
  for (const { title, c } of found) {
    test(title, async (t) => {
      const app = path.join(REAL_WORKERS, c.app);
      assert.ok(fs.existsSync(app), `no app ${app}`);
      /** @type {Record<string, any>} */
      const variables = { app };
      const defaults = c.vars || {};
      const r = caseSetting(t, c, variables);
      const { dispatcher, inbox, close } = inProcessDispatcher();
      /** @type {Map<string, any>} the worker's last FunctionMetadataResponse, by function name */
      let indexed = new Map();
      try {
        let number = 0;
        for (const step of c.steps) {
          number++;
          const [[kind, spec]] = Object.entries(step);
          const where = `step ${number} (${kind})`;
          if (CONVERSATION_NOOPS.includes(kind)) continue;
          if (kind === 'expect_map') {
            checkMap(concrete(spec, variables, defaults, where), r.dir);
          } else if (kind === 'host') {
            const content = '$sent' in spec ? spec.$sent : spec;
            assert.ok(!('$match' in content), `${where}: a $match without its $sent`);
            dispatcher.dispatch(overTheWire(toWireJson(concrete(content, variables, defaults, where))));
          } else if (kind === 'host_load') {
            const load = concrete(spec, variables, defaults, where);
            const request = indexed.has(load.function)
              ? loadFromMetadata(indexed.get(load.function), load.function_id)
              : functionLoadRequest(load.function, load.function_id, app);
            // What the fixture says the host's request holds must hold for the one built here too.
            match(load.metadata || {}, asJson(request.metadata), variables, `${where} metadata`);
            dispatcher.dispatch(overTheWire({ function_load_request: request }));
          } else if (kind === 'worker') {
            const expected = '$match' in spec ? spec.$match : spec;
            const [[content, matcher]] = Object.entries(expected);
            const sent = await inbox.next(content);
            assert.equal(sent.content, content, `${where}: expected ${content}, got ${JSON.stringify(asJson(sent)).slice(0, 500)}`);
            match(matcher, asJson(sent[content]), variables, `${where} ${content}`, true);
            if (content === 'function_metadata_response') {
              indexed = new Map(sent.function_metadata_response.function_metadata_results.map((/** @type {any} */ m) => [m.name, m]));
            }
          } else {
            assert.fail(`${where}: unknown step ${JSON.stringify(step)}`);
          }
        }
        await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
        const extra = inbox.messages.filter((m) => m.content !== 'rpc_log').map(asJson);
        assert.deepEqual(extra, [], 'after the last step the worker sent what the real worker does not');
      } finally {
        close();
      }
    });
  }
});
