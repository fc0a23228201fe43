'use strict';
/** Shared-memory maps: the C#-compatible layout, zero copy in mmap mode, the read mode, and who deletes what. */
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

    test('malformed maps and bad regions are refused with the map\'s name', async (t) => {
      const r = root(t);
      const m = new shm.SharedMemoryManager({ mode, env: r.env });
      const good = writeHostMap(r.root, Buffer.from('0123456789'));
      await assert.rejects(m.openInput('i', good, 5, 6), /region \[5, 11\) is outside shared-memory map/);
      await assert.rejects(m.openInput('i', 'nope', 0, 1), /shared-memory map "nope" not found in .*AzureFunctions/);
      await assert.rejects(m.openInput('i', '../etc', 0, 1), /is not a valid shared-memory map name/);
      const uninitialized = writeHostMap(r.root, Buffer.from('abc'));
      fs.writeFileSync(path.join(r.dir, uninitialized), Buffer.from([0, 3, 0, 0, 0, 0, 0, 0, 0, 97, 98, 99]));
      await assert.rejects(m.openInput('i', uninitialized, 0, 3), /is not initialized \(byte 0 is 0x00, expected 0x01\)/);
      const lying = writeHostMap(r.root, Buffer.from('abc'));
      const raw = fs.readFileSync(path.join(r.dir, lying));
      raw.writeBigInt64LE(1000n, 1);
      fs.writeFileSync(path.join(r.dir, lying), raw);
      await assert.rejects(m.openInput('i', lying, 0, 3), /declares 1000 content bytes but the file holds 3/);
      const short = writeHostMap(r.root, Buffer.alloc(0));
      fs.writeFileSync(path.join(r.dir, short), Buffer.from([1, 0]));
      await assert.rejects(m.openInput('i', short, 0, 0), /shorter than its 9-byte header/);
      m.releaseInvocation('i');
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
