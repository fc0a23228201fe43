#!/usr/bin/env node
'use strict';
/**
 * What it costs the Node worker to hand a function a shared-memory input as a Buffer, per mode:
 *   mmap           mmap-io maps the host's file (zero copy), one mapping kept and lent to every round (reset
 *                  with MADV_DONTNEED before each reuse: that is in "get")
 *   mmap, per invocation  a new mapping every round (FAASCACHE_NODE_SHM_MAP_CACHE_BYTES=0); its munmap and the
 *                  garbage collections it causes happen whenever V8 collects, in no timed window or any
 *   read           the fallback: one read into a Buffer (from the worker's pool from 32 MiB up, warm)
 *   read, no pool  one read into a newly allocated Buffer every time (what the pool saves)
 * "get" is openInput() alone; "get + touch" also reads one byte of every 4 KiB page, which is where a
 * mapping pays its page faults (a function that reads its input pays them anyway).
 *
 * Usage: node bench/shm-read.js [--n 31] [--sizes 1,16,128]   (sizes in MiB)
 * Writes its maps under /dev/shm/faascache-bench-node-<uuid>/ and removes them.
 */
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const shm = require('../lib/sharedMemory');

const MiB = 1024 * 1024;
const PAGE = 4096;

/** @param {string[]} argv */
function options(argv) {
  const get = (/** @type {string} */ flag, /** @type {string} */ fallback) => {
    const i = argv.indexOf(flag);
    return i >= 0 && i + 1 < argv.length ? argv[i + 1] : fallback;
  };
  const n = Number(get('--n', '31'));
  const sizes = get('--sizes', '1,16,128').split(',').map((s) => Number(s) * MiB);
  if (!Number.isInteger(n) || n < 1 || sizes.some((s) => !Number.isFinite(s) || s <= 0)) {
    throw new Error('usage: node bench/shm-read.js [--n 31] [--sizes 1,16,128]');
  }
  return { n, sizes };
}

/** @param {number[]} xs */
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** @param {Buffer} buf */
function touch(buf) {
  let sum = 0;
  for (let i = 0; i < buf.length; i += PAGE) sum += buf[i];
  return sum;
}

function cpuModel() {
  const cpus = os.cpus();
  return cpus.length ? cpus[0].model.trim() : 'unknown';
}

/**
 * @param {string} root
 * @param {number} size
 */
function writeMap(root, size) {
  const name = crypto.randomUUID();
  const header = Buffer.alloc(9);
  header[0] = 0x01;
  header.writeBigInt64LE(BigInt(size), 1);
  const fd = fs.openSync(path.join(root, shm.MAP_FOLDER, name), 'wx', 0o600);
  fs.writeSync(fd, header);
  const chunk = crypto.randomBytes(MiB);
  for (let done = 0; done < size; done += chunk.length) fs.writeSync(fd, chunk, 0, Math.min(chunk.length, size - done));
  fs.closeSync(fd);
  return name;
}

/**
 * One timed round: get the input, then touch every page, then give it back.
 * @param {shm.SharedMemoryManager} manager
 * @param {string} name
 * @param {number} size
 */
async function round(manager, name, size) {
  const t0 = process.hrtime.bigint();
  const buf = await manager.openInput('bench', name, 0, size);
  const t1 = process.hrtime.bigint();
  touch(buf);
  const t2 = process.hrtime.bigint();
  if (buf.length !== size) throw new Error(`got ${buf.length} bytes, expected ${size}`);
  manager.releaseInvocation('bench');
  return { get: Number(t1 - t0) / 1000, getTouch: Number(t2 - t0) / 1000 };
}

/**
 * Rounds of every mode interleaved (mode A, B, C, A, B, C, ...), so a busy machine slows them alike.
 * Mappings are released by the garbage collector as in the worker; nothing forces a collection.
 * @param {[string, shm.SharedMemoryManager][]} modes
 * @param {string} name
 * @param {number} size
 * @param {number} n
 */
async function measure(modes, name, size, n) {
  const samples = modes.map(() => ({ get: /** @type {number[]} */ ([]), getTouch: /** @type {number[]} */ ([]) }));
  for (let i = -3; i < n; i++) { // three warm-up rounds
    for (let m = 0; m < modes.length; m++) {
      const r = await round(modes[m][1], name, size);
      if (i >= 0) {
        samples[m].get.push(r.get);
        samples[m].getTouch.push(r.getTouch);
      }
    }
  }
  return samples.map((s) => ({ get: median(s.get), getTouch: median(s.getTouch) }));
}

async function main() {
  const { n, sizes } = options(process.argv.slice(2));
  const base = fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
  const root = path.join(base, `faascache-bench-node-${crypto.randomUUID()}`);
  fs.mkdirSync(path.join(root, shm.MAP_FOLDER), { recursive: true, mode: 0o700 });
  const cleanup = () => fs.rmSync(root, { recursive: true, force: true });
  process.on('SIGINT', () => {
    cleanup();
    process.exit(130);
  });
  try {
    const env = { [shm.DIRECTORIES_SETTING]: root };
    const probe = shm.probeMmap();
    /** @type {[string, shm.SharedMemoryManager][]} */
    const modes = [];
    if (probe.ok) {
      modes.push(['mmap', new shm.SharedMemoryManager({ mode: 'mmap', env })]);
      // FAASCACHE_NODE_SHM_MAP_CACHE_BYTES=0: a new mapping per invocation (before mappings were kept)
      const mappings = new shm.MappingCache({ mmap: probe.mmap, maxBytes: 0 });
      modes.push(['mmap, per invocation', new shm.SharedMemoryManager({ mode: 'mmap', env, mappings })]);
    }
    modes.push(['read', new shm.SharedMemoryManager({ mode: 'read', env, pool: new shm.BufferPool(512 * MiB) })]);
    modes.push(['read, no pool', new shm.SharedMemoryManager({ mode: 'read', env, pool: new shm.BufferPool(0) })]);

    console.log('FaaSCache Node worker: getting a shared-memory input as a Buffer');
    console.log(`machine: nproc=${os.availableParallelism()}, CPU: ${cpuModel()}, Node ${process.version}, ${os.type()} ${os.release()}`);
    console.log(`worker default mode here: ${shm.mode} (${shm.modeReason})`);
    if (!probe.ok) console.log(`mmap mode not measured: ${probe.reason}`);
    console.log(`median of ${n} rounds per mode (modes interleaved), microseconds; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}; maps in ${root}\n`);
    const header = ['size', 'mode', 'get (µs)', 'get + touch every page (µs)'];
    /** @type {string[][]} */
    const rows = [];
    for (const size of sizes) {
      const name = writeMap(root, size);
      const results = await measure(modes, name, size, n);
      results.forEach((m, i) => rows.push([`${size / MiB} MiB`, modes[i][0], m.get.toFixed(1), m.getTouch.toFixed(1)]));
      fs.unlinkSync(path.join(root, shm.MAP_FOLDER, name));
    }
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    const line = (/** @type {string[]} */ cells) => `| ${cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join(' | ')} |`;
    console.log(line(header));
    console.log(`|${widths.map((w, i) => (i < 2 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`);
    for (const r of rows) console.log(line(r));
  } finally {
    cleanup();
  }
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
