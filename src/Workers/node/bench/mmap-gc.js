#!/usr/bin/env node
'use strict';
/**
 * Does getting an mmap-mode input make V8 collect garbage? The worker's own openInput/releaseInvocation on a
 * map of 1 KB, 1 MiB, 16 MiB and 128 MiB, `--n` invocations each (default 200), yielding to the event loop
 * after each (as the worker does between invocations), touching the first and last byte, and counting V8's
 * mark-compacts and GC pause per invocation. Two variants, same code path:
 *   per-invocation  FAASCACHE_NODE_SHM_MAP_CACHE_BYTES=0: a new mapping per invocation (the old behaviour)
 *   kept            the default: one mapping per map file, lent to every invocation of that file
 * (It replaces a diagnostic that timed bare mmap-io calls the same way.)
 *
 * Usage: node bench/mmap-gc.js [--n 200] [--touch-all]   (--touch-all also reads one byte of every 4 KiB page)
 * Writes its maps under /dev/shm/faascache-bench-node-<uuid>/ and removes them.
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance, PerformanceObserver, constants } = require('node:perf_hooks');
const shm = require('../lib/sharedMemory');

const argv = process.argv.slice(2);
const n = Number(argv[argv.indexOf('--n') + 1]) || 200;
const touchAll = argv.includes('--touch-all');
const sizes = [1024, 1 << 20, 16 << 20, 128 << 20];

let majors = 0;
let pauseMs = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    pauseMs += e.duration;
    if (/** @type {any} */ (e).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++;
  }
}).observe({ entryTypes: ['gc'] });

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** @param {number} size */
function label(size) {
  return size >= 1 << 20 ? `${size >> 20} MiB` : `${size >> 10} KiB`;
}

async function main() {
  if (shm.mode !== 'mmap') throw new Error(`this measures mmap mode; the worker is in ${shm.mode} mode here (${shm.modeReason})`);
  const mmap = /** @type {any} */ (shm.activeMode().mmap);
  const base = fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
  const root = path.join(base, `faascache-bench-node-${crypto.randomUUID()}`);
  const dir = path.join(root, shm.MAP_FOLDER);
  fs.mkdirSync(dir, { recursive: true });
  const env = { [shm.DIRECTORIES_SETTING]: root };
  try {
    const load = os.loadavg().map((x) => x.toFixed(1)).join(' ');
    console.log(`node ${process.version}, nproc ${os.availableParallelism()}, load average ${load}; ${n} invocations per size and variant${touchAll ? ', touching every page' : ''}`);
    console.log('');
    console.log('| size | variant | mark-compacts | per invocation | GC pause ms / inv. | get p50 (ms) | mappings made |');
    console.log('|---|---|---:|---:|---:|---:|---:|');
    for (const size of sizes) {
      const name = crypto.randomUUID().replace(/-/g, '');
      const header = Buffer.alloc(9);
      header[0] = 1;
      header.writeBigInt64LE(BigInt(size), 1);
      fs.writeFileSync(path.join(dir, name), header);
      fs.truncateSync(path.join(dir, name), 9 + size);
      for (const [variant, maxBytes] of /** @type {const} */ ([['per-invocation', 0], ['kept', shm.DEFAULT_MAP_CACHE_BYTES]])) {
        const mappings = new shm.MappingCache({ mmap, maxBytes, sweepMs: 0 });
        const m = new shm.SharedMemoryManager({ mode: 'mmap', env, mappings });
        const times = [];
        await tick();
        majors = 0;
        pauseMs = 0;
        let sum = 0;
        for (let i = 0; i < n; i++) {
          const started = performance.now();
          const input = await m.openInput(`inv-${i}`, name, 0, size);
          times.push(performance.now() - started);
          sum += input[0] + input[size - 1];
          if (touchAll) for (let p = 0; p < size; p += 4096) sum += input[p];
          m.releaseInvocation(`inv-${i}`);
          await tick();
        }
        await tick();
        if (sum !== 0) throw new Error('unexpected content');
        times.sort((a, b) => a - b);
        console.log(`| ${label(size)} | ${variant} | ${majors} | ${(majors / n).toFixed(2)} | ${(pauseMs / n).toFixed(2)} | ${times[n >> 1].toFixed(3)} | ${mappings.stats.maps} |`);
        mappings.clear();
      }
      fs.unlinkSync(path.join(dir, name));
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
