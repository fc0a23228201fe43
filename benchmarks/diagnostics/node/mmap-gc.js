'use strict';
/**
 * Diagnostic (benchmarks/README.md, "Slow spot"): does mapping a shared-memory file with mmap-io, as the Node
 * worker does for every blob input, make V8 collect garbage? Maps a file of 1 KB, 1 MB, 16 MB and 128 MB
 * `--maps` times each (default 200) with the Node worker's own mmap-io, touching the first and last byte and
 * yielding to the event loop after each map (as a worker does between invocations), and counts V8's
 * mark-compacts per size. No host, no gRPC.
 *
 *   node benchmarks/diagnostics/node/mmap-gc.js [--maps N]
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance, PerformanceObserver, constants } = require('node:perf_hooks');

const MMAP_IO = path.join(__dirname, '..', '..', '..', 'src', 'Workers', 'node', 'node_modules', 'mmap-io');
const mmap = require(MMAP_IO);
const maps = Number(process.argv[process.argv.indexOf('--maps') + 1]) || 200;
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

async function main() {
  const dir = fs.mkdtempSync(path.join(fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'faascache-mmap-gc-'));
  try {
    console.log(`node ${process.version}, mmap-io ${require(path.join(MMAP_IO, 'package.json')).version}, ${maps} maps per size, files in ${dir}`);
    for (const size of sizes) {
      const file = path.join(dir, `map-${size}`);
      fs.writeFileSync(file, Buffer.alloc(0));
      fs.truncateSync(file, size + 9);
      const times = [];
      await tick();
      majors = 0;
      pauseMs = 0;
      for (let i = 0; i < maps; i++) {
        const started = performance.now();
        const fd = fs.openSync(file, 'r');
        const buffer = mmap.map(size + 9, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE, fd, 0);
        fs.closeSync(fd);
        if (buffer[9] + buffer[buffer.length - 1] < 0) throw new Error('unreachable');
        times.push(performance.now() - started);
        await tick();
      }
      await tick();
      times.sort((a, b) => a - b);
      console.log(
        `${String(size).padStart(10)} bytes: open+map p50 ${times[Math.floor(maps / 2)].toFixed(3)} ms; ` +
          `${majors} mark-compacts in ${maps} maps (${(majors / maps).toFixed(2)} per map), GC pauses ${(pauseMs / maps).toFixed(2)} ms per map`,
      );
      fs.unlinkSync(file);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
