'use strict';
/**
 * Shared-memory maps: the C#-compatible layout, zero copy in mmap mode, the read mode, and who deletes what.
 * Malformed headers, bad regions and bad names are conformance fixtures (../../conformance/map-headers.json).
 */
const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { test, describe } = require('node:test');
const shm = require('../lib/sharedMemory');
const { makeShmRoot, writeHostMap, readMapFile, WORKER_DIR } = require('../test-support/helpers');

const mmapProbe = shm.probeMmap();
const MODES = /** @type {const} */ (['mmap', 'read']);

/**
 * A private root and the environment that points at it; removed after the test.
 * @param {import('node:test').TestContext} t
 */
function root(t) {
  const r = makeShmRoot();
  t.after(r.remove);
  return { ...r, env: { [shm.DIRECTORIES_SETTING]: r.root } };
}

test('a written map has the host\'s header, mode 0600 and a flat unguessable name', async (t) => {
  const r = root(t);
  const { name, path: file, count } = await shm.createMap(Buffer.from('hello cache'), r.env);
  assert.equal(file, path.join(r.dir, name));
  assert.equal(count, 11);
  const raw = fs.readFileSync(file);
  assert.equal(raw[0], 0x01);
  assert.equal(raw.readBigInt64LE(1), 11n);
  assert.equal(raw.subarray(9).toString(), 'hello cache');
  assert.equal(raw.length, 9 + 11);
  assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  assert.match(name, /^[0-9a-f]{32}$/);
});

test('an empty output is a 9-byte map', async (t) => {
  const r = root(t);
  const { name, count } = await shm.createMap(Buffer.alloc(0), r.env);
  assert.equal(count, 0);
  assert.equal(readMapFile(path.join(r.dir, name)).length, 0);
});

test('the first usable directory of FUNCTIONS_UNIX_SHARED_MEMORY_DIRECTORIES is used', async (t) => {
  const r = root(t);
  const notADirectory = path.join(r.root, 'file');
  fs.writeFileSync(notADirectory, 'x');
  const env = { [shm.DIRECTORIES_SETTING]: ` ${notADirectory} , ${r.root} ` };
  assert.deepEqual(shm.roots(env), [notADirectory, r.root]);
  const { path: file } = await shm.createMap(Buffer.from('x'), env);
  assert.equal(path.dirname(file), r.dir);
  assert.deepEqual(shm.roots({}), ['/dev/shm']);
  await assert.rejects(shm.createMap(Buffer.from('x'), { [shm.DIRECTORIES_SETTING]: notADirectory }), /cannot create a shared-memory map of 1 bytes: .*file\/AzureFunctions/);
});

for (const mode of MODES) {
  describe(`${mode} mode`, { skip: mode === 'mmap' && !mmapProbe.ok && `mmap-io unavailable: ${!mmapProbe.ok && mmapProbe.reason}` }, () => {
    test('reads a map written like the C# host, and regions of it', async (t) => {
      const r = root(t);
      const payload = crypto.randomBytes(3 * 1024 * 1024 + 7);
      const name = writeHostMap(r.root, payload);
      const m = new shm.SharedMemoryManager({ mode, env: r.env });
      assert.equal(m.mode, mode);
      const whole = await m.openInput('inv', name, 0, payload.length);
      assert.ok(Buffer.isBuffer(whole));
      assert.ok(whole.equals(payload));
      const part = await m.openInput('inv', name, 5, 10);
      assert.ok(part.equals(payload.subarray(5, 15)));
      const tail = await m.openInput('inv', name, 1, payload.length - 1); // large (read off the event loop), with an offset
      assert.ok(tail.equals(payload.subarray(1)));
      const none = await m.openInput('inv', name, 0, 0);
      assert.equal(none.length, 0);
      m.releaseInvocation('inv');
      assert.ok(fs.existsSync(path.join(r.dir, name)), 'inputs are the host\'s: never deleted');
    });

    test('round trip through our writer and reader', async (t) => {
      const r = root(t);
      const m = new shm.SharedMemoryManager({ mode, env: r.env });
      const text = 'zürich ☃';
      const { name, count } = await m.put(Buffer.from(text), 'inv');
      assert.equal(count, Buffer.byteLength(text));
      assert.equal((await m.openInput('other', name, 0, count)).toString(), text);
      m.releaseInvocation('other');
    });

  });
}

describe('zero copy in mmap mode', { skip: !mmapProbe.ok && `mmap-io unavailable: ${!mmapProbe.ok && mmapProbe.reason}` }, () => {
  test('a write through another mapping of the file shows in the input Buffer', async (t) => {
    const r = root(t);
    const name = writeHostMap(r.root, Buffer.alloc(8192, 'a'));
    const m = new shm.SharedMemoryManager({ mode: 'mmap', env: r.env });
    const input = await m.openInput('inv', name, 0, 8192);
    assert.equal(input[5000], 0x61);

    // The cachelet's own mapping of the same file (shared, writable).
    const mmap = /** @type {any} */ (require('mmap-io'));
    const fd = fs.openSync(path.join(r.dir, name), 'r+');
    const hostView = mmap.map(9 + 8192, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, fd, 0);
    fs.closeSync(fd);
    hostView[9 + 5000] = 0x7a;
    hostView[9] = 0x62;
    assert.equal(input[5000], 0x7a, 'the Buffer is the file\'s pages, not a copy');
    assert.equal(input[0], 0x62);

    const maps = fs.readFileSync('/proc/self/maps', 'utf8');
    assert.ok(maps.split('\n').some((l) => l.endsWith(`/AzureFunctions/${name}`)), 'the map file is mapped into this process');
    m.releaseInvocation('inv');
  });

  test('a function writing into its input gets a private page: no crash, the host\'s file is unchanged', async (t) => {
    const r = root(t);
    const name = writeHostMap(r.root, Buffer.alloc(8192, 'a'));
    const m = new shm.SharedMemoryManager({ mode: 'mmap', env: r.env });
    const input = await m.openInput('inv', name, 0, 8192);
    input.fill(0x21, 0, 100);
    assert.equal(input[0], 0x21);
    assert.ok(readMapFile(path.join(r.dir, name)).equals(Buffer.alloc(8192, 'a')));
    m.releaseInvocation('inv');
  });
});

describe('read mode', () => {
  test('FAASCACHE_NODE_SHM_MODE picks the mode at start-up (read forces the fallback)', () => {
    /** @param {Record<string, string>} extra */
    const modeWith = (extra) =>
      execFileSync(process.execPath, ['-e', "const s = require('./lib/sharedMemory'); process.stdout.write(s.mode + ' | ' + s.modeReason)"], {
        cwd: WORKER_DIR,
        env: { ...process.env, ...extra },
        encoding: 'utf8',
      });
    assert.equal(modeWith({ [shm.MODE_SETTING]: 'read' }), 'read | FAASCACHE_NODE_SHM_MODE=read');
    const auto = modeWith({ [shm.MODE_SETTING]: '' });
    assert.match(auto, mmapProbe.ok ? /^mmap \| zero copy: mmap-io/ : /^read \| mmap-io/);
    assert.throws(() => shm.detectMode({ [shm.MODE_SETTING]: 'mmapp' }), /FAASCACHE_NODE_SHM_MODE="mmapp" is not one of mmap, read, auto/);
  });

  test('a large input is one read into a pooled Buffer that is reused, and taken back when the invocation ends', async (t) => {
    const r = root(t);
    const size = 33 * 1024 * 1024; // pooled from 32 MiB up
    const a = writeHostMap(r.root, Buffer.alloc(size, 'a'));
    const b = writeHostMap(r.root, Buffer.alloc(size, 'b'));
    const m = new shm.SharedMemoryManager({ mode: 'read', env: r.env, pool: new shm.BufferPool(128 * 1024 * 1024) });
    const first = await m.openInput('one', a, 0, size);
    const backing = first.buffer;
    const concurrent = await m.openInput('two', b, 0, size);
    assert.notEqual(concurrent.buffer, backing, 'two invocations never share a pooled Buffer');
    assert.ok(first.equals(Buffer.alloc(size, 'a')) && concurrent.equals(Buffer.alloc(size, 'b')));

    const kept = first.subarray(10, 20); // a function that keeps a slice beyond its invocation...
    m.releaseInvocation('one');
    assert.equal(first.length, 0, '...sees an empty Buffer, never the next invocation\'s data');
    assert.equal(kept.length, 0);
    assert.equal(m.pool.free.length, 1);

    const again = await m.openInput('three', b, 0, size);
    assert.equal(m.pool.free.length, 0, 'the pooled memory was lent again');
    assert.ok(again.equals(Buffer.alloc(size, 'b')));
    m.releaseInvocation('two');
    m.releaseInvocation('three');
  });

  test('inputs under 32 MiB get Buffers of their own; the pool keeps at most its limit', () => {
    const MiB = 1024 * 1024;
    const pool = new shm.BufferPool(70 * MiB);
    const small = pool.acquire(31 * MiB);
    assert.equal(pool.isLent(small), false);
    pool.release(small);
    assert.equal(small.length, 31 * MiB, 'not pooled: left alone');
    const bufs = [pool.acquire(40 * MiB), pool.acquire(40 * MiB)];
    assert.ok(bufs.every((b) => pool.isLent(b)));
    for (const buf of bufs) pool.release(buf);
    assert.equal(pool.free.length, 1);
    assert.ok(pool.freeBytes <= 70 * MiB);
    assert.equal(pool.acquire(100 * MiB).length, 100 * MiB, 'nothing idle fits: a new one');
    const tooLarge = pool.acquire(80 * MiB);
    pool.release(tooLarge);
    assert.equal(tooLarge.length, 80 * MiB, 'a Buffer the pool will not keep is left with the function');
    pool.clear();
  });
});

describe('closing', () => {
  test('with FunctionDataCache the host owns our outputs: closed, never deleted', async (t) => {
    const r = root(t);
    const m = new shm.SharedMemoryManager({ env: r.env });
    const { name } = await m.put(Buffer.from('out'), 'inv');
    assert.deepEqual(m.closeMaps([name, 'unknown'], false), { [name]: true, unknown: false });
    assert.ok(fs.existsSync(path.join(r.dir, name)));
    assert.deepEqual(m.closeMaps([name], false), { [name]: false }, 'a map is closed once');
  });

  test('without it, the host copied the data out: we delete our own outputs', async (t) => {
    const r = root(t);
    const m = new shm.SharedMemoryManager({ env: r.env });
    const { name } = await m.put(Buffer.from('out'), 'inv');
    assert.deepEqual(m.closeMaps([name], true), { [name]: true });
    assert.ok(!fs.existsSync(path.join(r.dir, name)));
  });

  test('input maps are let go of but never deleted, even when the host names them', async (t) => {
    const r = root(t);
    const m = new shm.SharedMemoryManager({ env: r.env });
    const input = writeHostMap(r.root, Buffer.from('in'));
    await m.openInput('inv', input, 0, 2);
    assert.deepEqual(m.closeMaps([input], true), { [input]: true });
    assert.ok(fs.existsSync(path.join(r.dir, input)));
  });

  test('a failed invocation\'s outputs are deleted; at exit unclaimed outputs go only without a host cache', async (t) => {
    const r = root(t);
    const m = new shm.SharedMemoryManager({ env: r.env });
    const failed = await m.put(Buffer.from('x'), 'failed');
    const kept = await m.put(Buffer.from('y'), 'ok');
    m.discardCreated(m.createdNamesFor('failed'));
    assert.ok(!fs.existsSync(path.join(r.dir, failed.name)));
    m.closeAll(false);
    assert.ok(fs.existsSync(path.join(r.dir, kept.name)), 'a cache may have adopted it');
    const other = new shm.SharedMemoryManager({ env: r.env });
    const gone = await other.put(Buffer.from('z'), 'ok');
    other.closeAll(true);
    assert.ok(!fs.existsSync(path.join(r.dir, gone.name)));
  });
});

describe('mmap mode keeps one mapping per map file', { skip: !mmapProbe.ok && `mmap-io unavailable: ${!mmapProbe.ok && mmapProbe.reason}` }, () => {
  /**
   * A manager whose mapping cache is fresh and swept only when the test says so.
   * @param {{ env: NodeJS.ProcessEnv }} r
   * @param {{ maxBytes?: number, idleMs?: number, now?: () => number }} [options]
   */
  function manager(r, options = {}) {
    const mappings = new shm.MappingCache({ mmap: mmapProbe.ok && mmapProbe.mmap, sweepMs: 0, ...options });
    return new shm.SharedMemoryManager({ mode: 'mmap', env: r.env, mappings });
  }

  /** @param {string} name */
  function mappedCount(name) {
    return fs.readFileSync('/proc/self/maps', 'utf8').split('\n').filter((l) => l.endsWith(`/AzureFunctions/${name}`)).length;
  }

  test('50 invocations of a 64 MiB map reuse one mapping: external memory stays flat', async (t) => {
    const r = root(t);
    const size = 64 * 1024 * 1024;
    const content = Buffer.alloc(size, 0x61);
    const name = writeHostMap(r.root, content);
    const m = manager(r);
    const first = await m.openInput('inv-0', name, 0, size);
    assert.equal(first[size - 1], 0x61);
    m.releaseInvocation('inv-0');
    const external = process.memoryUsage().external;
    for (let i = 1; i <= 50; i++) {
      const input = await m.openInput(`inv-${i}`, name, 0, size);
      assert.equal(input.length, size);
      assert.equal(input[0] + input[size - 1], 0xc2);
      m.releaseInvocation(`inv-${i}`);
    }
    const grown = process.memoryUsage().external - external;
    assert.ok(grown < 4 * 1024 * 1024, `external memory grew by ${grown} bytes over 50 reuses`);
    assert.deepEqual(m.mappings?.stats, { maps: 1, reuses: 50, drops: 0 });
    assert.equal(m.mappings?.bytes, 9 + size);
    assert.equal(mappedCount(name), 1);
  });

  test('a write into an input is gone for the next invocation, and never reaches the file', async (t) => {
    const r = root(t);
    const name = writeHostMap(r.root, Buffer.alloc(3 * 4096, 'a'));
    const m = manager(r);
    const first = await m.openInput('one', name, 0, 3 * 4096);
    first.fill(0x21, 0, 5000);
    m.releaseInvocation('one');
    const second = await m.openInput('two', name, 0, 3 * 4096);
    assert.equal(m.mappings?.stats.reuses, 1);
    assert.ok(second.equals(Buffer.alloc(3 * 4096, 'a')), 'the next invocation sees the file, not the earlier write');
    assert.ok(readMapFile(path.join(r.dir, name)).equals(Buffer.alloc(3 * 4096, 'a')));
    m.releaseInvocation('two');
  });

  test('concurrent invocations of one map get separate mappings: one\'s write never shows in the other', async (t) => {
    const r = root(t);
    const name = writeHostMap(r.root, Buffer.alloc(8192, 'a'));
    const m = manager(r);
    const a = await m.openInput('a', name, 0, 8192);
    const b = await m.openInput('b', name, 0, 8192);
    a[100] = 0x21;
    assert.equal(b[100], 0x61);
    assert.equal(m.mappings?.stats.maps, 2);
    m.releaseInvocation('a');
    m.releaseInvocation('b');
    await m.openInput('c', name, 0, 8192);
    await m.openInput('d', name, 0, 8192);
    assert.deepEqual(m.mappings?.stats, { maps: 2, reuses: 2, drops: 0 }, 'both kept and reused');
    m.releaseInvocation('c');
    m.releaseInvocation('d');
  });

  test('a file replaced under the same name gets a new mapping (inode check)', async (t) => {
    const r = root(t);
    const name = writeHostMap(r.root, Buffer.alloc(8192, 'a'));
    const m = manager(r);
    assert.equal((await m.openInput('one', name, 0, 8192))[0], 0x61);
    m.releaseInvocation('one');
    const file = path.join(r.dir, name);
    const before = fs.statSync(file).ino;
    fs.unlinkSync(file);
    writeHostMap(r.root, Buffer.alloc(8192, 'b'), name); // same name, same size, another file
    assert.notEqual(fs.statSync(file).ino, before);
    const input = await m.openInput('two', name, 0, 8192);
    assert.ok(input.equals(Buffer.alloc(8192, 'b')));
    assert.deepEqual(m.mappings?.stats, { maps: 2, reuses: 0, drops: 1 });
    assert.equal(m.mappings?.size, 1);
    m.releaseInvocation('two');
  });

  test('a deleted file\'s mapping is dropped by the sweep; an idle one after idleMs', async (t) => {
    const r = root(t);
    let clock = 0;
    const m = manager(r, { idleMs: 10_000, now: () => clock });
    const gone = writeHostMap(r.root, Buffer.alloc(4096, 'g'));
    const kept = writeHostMap(r.root, Buffer.alloc(4096, 'k'));
    await m.openInput('one', gone, 0, 4096);
    await m.openInput('one', kept, 0, 4096);
    m.releaseInvocation('one');
    fs.unlinkSync(path.join(r.dir, gone));
    clock = 5_000;
    m.mappings?.sweep();
    assert.deepEqual([...(m.mappings?.entries.keys() || [])], [path.join(r.dir, kept)]);
    clock = 15_000;
    m.mappings?.sweep();
    assert.equal(m.mappings?.size, 0);
    assert.equal(m.mappings?.bytes, 0);
  });

  test('an in-use mapping is never dropped from under its invocation, and not lent again once its file is gone', async (t) => {
    const r = root(t);
    const name = writeHostMap(r.root, Buffer.alloc(4096, 'x'));
    const m = manager(r);
    const input = await m.openInput('one', name, 0, 4096);
    fs.unlinkSync(path.join(r.dir, name));
    m.mappings?.sweep();
    assert.equal(m.mappings?.size, 0);
    assert.equal(input[4095], 0x78, 'the invocation keeps its view');
    m.releaseInvocation('one');
    await assert.rejects(m.openInput('two', name, 0, 4096), /not found/);
  });

  test('the size cap evicts the least recently used idle mappings', async (t) => {
    const r = root(t);
    const unit = 64 * 1024;
    const m = manager(r, { maxBytes: 3 * (unit + 9) });
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((ch) => writeHostMap(r.root, Buffer.alloc(unit, ch)));
    for (const name of [a, b, c]) {
      await m.openInput(name, name, 0, unit);
      m.releaseInvocation(name);
    }
    await m.openInput('again', a, 0, unit); // a is now the most recent
    m.releaseInvocation('again');
    await m.openInput('new', d, 0, unit); // over the cap: b (least recently used) goes
    m.releaseInvocation('new');
    const files = new Set(m.mappings?.entries.keys());
    assert.deepEqual([a, c, d].map((n) => files.has(path.join(r.dir, n))), [true, true, true]);
    assert.equal(files.has(path.join(r.dir, b)), false);
    assert.equal(m.mappings?.bytes, 3 * (unit + 9));
  });

  test('FAASCACHE_NODE_SHM_MAP_CACHE_BYTES=0 maps per invocation, as before', async (t) => {
    const r = root(t);
    const name = writeHostMap(r.root, Buffer.alloc(4096, 'z'));
    const m = manager(r, { maxBytes: 0 });
    for (const id of ['one', 'two']) {
      assert.equal((await m.openInput(id, name, 0, 4096))[0], 0x7a);
      m.releaseInvocation(id);
    }
    assert.deepEqual(m.mappings?.stats, { maps: 2, reuses: 0, drops: 0 });
    assert.equal(m.mappings?.size, 0);
  });

  test('closing an input map by name drops its mapping', async (t) => {
    const r = root(t);
    const name = writeHostMap(r.root, Buffer.alloc(4096, 'q'));
    const m = manager(r);
    await m.openInput('one', name, 0, 4096);
    m.releaseInvocation('one');
    assert.deepEqual(m.closeMaps([name], false), { [name]: true });
    assert.equal(m.mappings?.size, 0);
    assert.deepEqual(m.closeMaps([name], false), { [name]: false });
  });
});
