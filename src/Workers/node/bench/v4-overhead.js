#!/usr/bin/env node
'use strict';
/**
 * What the Node.js v4 programming model costs the worker per invocation, against the function.json model: the same
 * two functions (benchmarks/apps/node-v4 and benchmarks/apps/node: Ping, no input; Touch, a 1 KB blob input in shared
 * memory) run by the worker in-process (test-support/inProcess.js: each message serialized and decoded as over the
 * stream), `--n` sequential invocations each after a warm-up, p50/p90 in microseconds. With `--profile` the v4 Ping
 * loop runs again under V8's sampling profiler and the functions with the most inclusive time are printed: where the
 * difference goes (the @azure/functions library's HttpRequest/HttpResponse over undici's Request/Response, which
 * the real Node.js worker runs too, against the worker's own code).
 *
 * Usage: node bench/v4-overhead.js [--n 3000] [--profile]   (needs bash scripts/setup.sh: the apps' node_modules)
 */
const inspector = require('node:inspector/promises');
const path = require('node:path');
const { functionLoadRequest, workerIndexedLoadRequest, writeHostMap } = require('../test-support/helpers');
const { InProcessWorker } = require('../test-support/inProcess');

const APPS = path.resolve(__dirname, '..', '..', '..', '..', 'benchmarks', 'apps');
const argv = process.argv.slice(2);
const n = Number(argv[argv.indexOf('--n') + 1]) || 3000;

/** @param {string} trigger @param {string} route */
function http(trigger, route) {
  const url = `http://127.0.0.1:7071/api/${route}/x`;
  return { name: trigger, data: { http: { method: 'GET', url, params: { name: 'x' }, headers: { host: '127.0.0.1:7071', accept: '*/*' }, nullable_params: { name: { value: 'x' } } } } };
}

async function main() {
  const v3 = new InProcessWorker();
  await v3.init(path.join(APPS, 'node'), { functionDataCache: true });
  await v3.metadata();
  for (const f of ['Ping', 'Touch']) await v3.request({ function_load_request: functionLoadRequest(f, f, path.join(APPS, 'node')) }, 'function_load_response');
  const v4 = new InProcessWorker();
  await v4.init(path.join(APPS, 'node-v4'), { functionDataCache: true });
  /** @type {Record<string, { id: string, bindings: any[] }>} */
  const fns = {};
  for (const m of (await v4.metadata()).function_metadata_results) {
    await v4.request({ function_load_request: workerIndexedLoadRequest(m) }, 'function_load_response');
    fns[m.name] = { id: m.function_id, bindings: m.raw_bindings.map((/** @type {string} */ b) => JSON.parse(b)) };
  }
  const blob = Buffer.alloc(1024, 3);
  const maps = { v3: writeHostMap(v3.shmRoot.root, blob), v4: writeHostMap(v4.shmRoot.root, blob) };
  const shm = (/** @type {string} */ name, /** @type {string} */ map) => ({ name, rpc_shared_memory: { name: map, offset: 0, count: blob.length, type: 'bytes' } });
  const trigger = (/** @type {string} */ f) => fns[f].bindings.find((b) => b.type === 'httpTrigger').name;
  const blobName = fns.Touch.bindings.find((b) => b.type === 'blob').name;
  /** @type {Record<string, () => Promise<any>>} */
  const cases = {
    'function.json Ping': () => v3.invoke('Ping', [http('req', 'ping')]),
    'v4 Ping': () => v4.invoke(fns.Ping.id, [http(trigger('Ping'), 'ping')]),
    'function.json Touch': () => v3.invoke('Touch', [http('req', 'touch'), shm('blob', maps.v3)]),
    'v4 Touch': () => v4.invoke(fns.Touch.id, [http(trigger('Touch'), 'touch'), shm(blobName, maps.v4)]),
  };
  console.log(`${n} sequential invocations each, in-process, after as many to warm up; microseconds`);
  for (const [name, call] of Object.entries(cases)) {
    const first = await call();
    if (first.result.status !== 'Success') throw new Error(`${name}: ${JSON.stringify(first.result)}`);
    for (let i = 0; i < n; i++) await call();
    const times = [];
    for (let i = 0; i < n; i++) {
      const t0 = process.hrtime.bigint();
      await call();
      times.push(Number(process.hrtime.bigint() - t0) / 1000);
    }
    times.sort((a, b) => a - b);
    console.log(`${name.padEnd(20)} p50 ${times[n >> 1].toFixed(1).padStart(7)}  p90 ${times[Math.floor(n * 0.9)].toFixed(1).padStart(7)}`);
  }
  if (argv.includes('--profile')) await profile(cases['v4 Ping']);
  v3.close();
  v4.close();
}

/** @param {() => Promise<any>} call */
async function profile(call) {
  const session = new inspector.Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  for (let i = 0; i < 5 * n; i++) await call();
  const { profile: p } = await session.post('Profiler.stop');
  session.disconnect();
  const byId = new Map(p.nodes.map((/** @type {any} */ node) => [node.id, node]));
  const parent = new Map();
  for (const node of p.nodes) for (const child of node.children || []) parent.set(child, node.id);
  /** @type {Map<number, number>} */
  const self = new Map();
  const deltas = p.timeDeltas || [];
  (p.samples || []).forEach((/** @type {number} */ id, /** @type {number} */ i) => self.set(id, (self.get(id) || 0) + (deltas[i] || 0)));
  /** @type {Map<string, number>} */
  const inclusive = new Map();
  let total = 0;
  for (const [id, t] of self) {
    total += t;
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const { functionName, url, lineNumber } = byId.get(cur).callFrame;
      const where = `${functionName || '(anonymous)'} ${url.split('/').slice(-3).join('/')}:${lineNumber + 1}`;
      if (seen.has(where)) continue;
      seen.add(where);
      inclusive.set(where, (inclusive.get(where) || 0) + t);
    }
  }
  console.log('\nv4 Ping under the profiler: share of samples (inclusive), top 25');
  for (const [where, t] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${((100 * t) / total).toFixed(1).padStart(5)}%  ${where}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
