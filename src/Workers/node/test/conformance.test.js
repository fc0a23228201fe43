'use strict';
/**
 * The cross-language conformance fixtures (src/Workers/conformance/*.json), run against this worker.
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

const LANGUAGE = 'node';
const CONFORMANCE = path.resolve(WORKER_DIR, '..', 'conformance');
const APPS = path.join(CONFORMANCE, 'apps');
/** The Node.js v4 programming model app (`{{app_v4}}`); its @azure/functions comes from scripts/setup.d/node-apps.sh. */
const APPS_V4 = path.join(CONFORMANCE, 'apps-v4');
const KINDS = ['map_headers', 'input_decoding', 'message_scripts'];
const TIMEOUT_MS = 10_000;
const mmapProbe = shm.probeMmap();
const { eventStream } = protos.load();

// ---- the fixture files --------------------------------------------------------------------------------

/** @returns {{ file: string, fixture: any }[]} */
function fixtureFiles() {
  return fs.readdirSync(CONFORMANCE).filter((f) => f.endsWith('.json')).sort()
    .map((f) => ({ file: f, fixture: JSON.parse(fs.readFileSync(path.join(CONFORMANCE, f), 'utf8')) }));
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

/** Messages the dispatcher sent, as the host decodes them; `next` waits for the next one that is not a log. */
class Inbox {
  constructor() {
    /** @type {any[]} */
    this.messages = [];
    /** @type {(() => void) | undefined} */
    this.wake = undefined;
  }

  /** @param {any} message */
  push(message) {
    this.messages.push(message);
    if (this.wake) this.wake();
  }

  /** @param {string} waitingFor */
  async next(waitingFor) {
    const deadline = Date.now() + TIMEOUT_MS;
    for (;;) {
      const message = this.messages.shift();
      if (message && message.content !== 'rpc_log') return message;
      if (message) continue;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${waitingFor} from the worker within ${TIMEOUT_MS} ms`);
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve(undefined);
        };
      });
      this.wake = undefined;
    }
  }
}

describe('message scripts', () => {
  for (const { title, c } of cases('message_scripts')) {
    test(title, async (t) => {
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
      /** @type {Record<string, any>} */
      const variables = { app: APPS, app_v4: APPS_V4 };
      for (const [name, spec] of Object.entries(c.host_maps || {})) {
        const content = contentOf(/** @type {any} */ (spec));
        variables[name] = writeHostMap(r.root, content);
        variables[`${name}.count`] = content.length;
      }
      const logger = new RpcLogger({ stderr: new PassThrough() });
      const dispatcher = new Dispatcher(
        { host: '127.0.0.1', port: 1, workerId: 'conformance-worker', requestId: 'conformance', maxMessageLength: 1 << 30, target: '127.0.0.1:1' },
        { logger },
      );
      const inbox = new Inbox();
      dispatcher.send = (content) => inbox.push(overTheWire(content));
      logger.connect((content) => dispatcher.send(content));
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
        logger.disconnect();
        dispatcher.shm.closeAll(!dispatcher.policy.functionDataCache); // as run() does at exit
      }
    });
  }
});
