using System.Diagnostics.Metrics;
using FaaSCache.Caching;

namespace FaaSCache.Diagnostics;

/// <summary>Counter values at one moment, for tests, banners and benchmarks.</summary>
public sealed record CacheletCounters(
    long LocalHits,
    long LocalMisses,
    long RemoteHits,
    long RemoteMisses,
    long Bypasses,
    long VersionChecks,
    long BytesServed,
    long BytesFetched,
    long BytesWritten,
    long Evictions,
    long Writes,
    long BytesCached,
    long ObjectsCached,
    long OwnerUnreachable = 0,
    long PeerServed = 0,
    long Invalidations = 0,
    long BytesFromPeers = 0,
    long StorageFallbacks = 0,
    long PeerHits = 0,
    long PeerMisses = 0,
    long PeerWrites = 0,
    long ScaledLoads = 0,
    long RangeLoadsServed = 0,
    long RangesFetchedForHelpers = 0,
    long MemoryEvictions = 0,
    long MemoryEvictedBytes = 0);

/// <summary>
/// The cachelet's instruments on the <c>FaaSCache</c> meter (readable with
/// <c>dotnet-counters monitor --counters FaaSCache</c>), plus plain counters for in-process readers.
/// </summary>
public sealed class CacheletMetrics : IDisposable
{
    /// <summary>The meter name.</summary>
    public const string MeterName = "FaaSCache";

    private readonly Meter _meter;
    private readonly Counter<long> _hits;
    private readonly Counter<long> _misses;
    private readonly Counter<long> _bypasses;
    private readonly Counter<long> _versionChecks;
    private readonly Counter<long> _bytesServed;
    private readonly Counter<long> _bytesFetched;
    private readonly Counter<long> _bytesWritten;
    private readonly Counter<long> _evictions;
    private readonly Counter<long> _writes;
    private readonly Counter<long> _ownerUnreachable;
    private readonly Counter<long> _peerServed;
    private readonly Counter<long> _invalidations;
    private readonly Counter<long> _bytesFromPeers;
    private readonly Counter<long> _peerReads;
    private readonly Counter<long> _peerWrites;
    private readonly Counter<long> _scaledLoads;
    private readonly Counter<long> _rangeLoadsServed;
    private readonly Counter<long> _rangeFallbacks;
    private readonly Counter<long> _memoryEvictions;
    private readonly Counter<long> _memoryEvictedBytes;
    private readonly KeyValuePair<string, object?> _instance;
    private readonly KeyValuePair<string, object?> _local = new("type", "local");
    private readonly KeyValuePair<string, object?> _remote = new("type", "remote");
    private readonly KeyValuePair<string, object?> _fallback = new("type", "fallback");
    private readonly KeyValuePair<string, object?> _hit = new("result", "hit");
    private readonly KeyValuePair<string, object?> _miss = new("result", "miss");
    private long _memoryEvicted, _memoryEvictedBytesCount;
    private long _fallbacks, _peerHits, _peerMisses, _peerWriteCount, _scaled, _rangesServed, _rangesTakenBack;
    private long _localHits, _localMisses, _remoteHits, _remoteMisses, _bypassCount, _checks, _served, _fetched, _written, _evicted, _writeCount, _unreachable, _peerServedCount, _invalidated, _fromPeers;

    /// <summary>Initializes a new instance of the <see cref="CacheletMetrics"/> class.</summary>
    /// <param name="instanceId">Tagged on every measurement.</param>
    /// <param name="bytesCached">Reads the bytes cached now.</param>
    /// <param name="objectsCached">Reads the objects cached now.</param>
    /// <param name="meterFactory">Optional factory (DI); a private meter otherwise.</param>
    public CacheletMetrics(string instanceId, Func<long> bytesCached, Func<long> objectsCached, IMeterFactory? meterFactory = null)
    {
        _meter = meterFactory?.Create(MeterName) ?? new Meter(MeterName);
        _instance = new("instance", instanceId);
        _hits = _meter.CreateCounter<long>("faascache.hits", "{read}", "Reads served from a cache (type: local or remote)");
        _misses = _meter.CreateCounter<long>("faascache.misses", "{read}", "Reads fetched from storage (type: local; remote when the owner fetched; fallback when a non-owner could not reach the owner)");
        _bypasses = _meter.CreateCounter<long>("faascache.bypasses", "{read}", "Reads of doNotCache keys");
        _versionChecks = _meter.CreateCounter<long>("faascache.version_checks", "{request}", "Conditional requests made to check a cached version");
        _bytesServed = _meter.CreateCounter<long>("faascache.bytes_served", "By", "Bytes handed to readers");
        _bytesFetched = _meter.CreateCounter<long>("faascache.bytes_fetched", "By", "Bytes downloaded from storage");
        _bytesWritten = _meter.CreateCounter<long>("faascache.bytes_written", "By", "Bytes uploaded to storage");
        _evictions = _meter.CreateCounter<long>("faascache.evictions", "{object}", "Objects evicted to make room or expired");
        _writes = _meter.CreateCounter<long>("faascache.writes", "{write}", "Writes through the cache");
        _ownerUnreachable = _meter.CreateCounter<long>("faascache.owner_unreachable", "{call}", "Reads or writes that fell back to storage because the owner could not be reached");
        _peerServed = _meter.CreateCounter<long>("faascache.peer_served", "{call}", "Gets served to other cachelets");
        _bytesFromPeers = _meter.CreateCounter<long>("faascache.bytes_from_peers", "By", "Bytes received from other cachelets");
        _invalidations = _meter.CreateCounter<long>("faascache.invalidations", "{object}", "Stale copies dropped on the owner's word");
        _peerReads = _meter.CreateCounter<long>("faascache.peer_reads", "{read}", "Other cachelets' reads served as the owner (result: hit, or miss when fetched from storage first)");
        _peerWrites = _meter.CreateCounter<long>("faascache.peer_writes", "{write}", "Other cachelets' writes committed as the owner");
        _scaledLoads = _meter.CreateCounter<long>("faascache.scaled_loads", "{load}", "Misses downloaded as byte ranges by several instances at once (bandwidth scaling)");
        _rangeLoadsServed = _meter.CreateCounter<long>("faascache.range_loads_served", "{range}", "Byte ranges downloaded from storage for another instance's scaled load");
        _rangeFallbacks = _meter.CreateCounter<long>("faascache.range_fallbacks", "{range}", "Ranges of a scaled load that a helper could not deliver and the requester fetched itself");
        _memoryEvictions = _meter.CreateCounter<long>("faascache.memory_evictions", "{object}", "Objects the Memory Daemon evicted because function memory plus cached bytes came within the headroom of the limit");
        _memoryEvictedBytes = _meter.CreateCounter<long>("faascache.memory_evicted_bytes", "By", "Bytes the Memory Daemon freed");
        _meter.CreateObservableGauge("faascache.bytes_cached", () => new Measurement<long>(bytesCached(), _instance), "By", "Bytes cached now");
        _meter.CreateObservableGauge("faascache.objects_cached", () => new Measurement<long>(objectsCached(), _instance), "{object}", "Objects cached now");
        BytesCached = bytesCached;
        ObjectsCached = objectsCached;
    }

    private Func<long> BytesCached { get; }

    private Func<long> ObjectsCached { get; }

    /// <summary>
    /// Records a read and the bytes handed out: for this instance's functions, or, with <paramref name="forPeer"/>, a read
    /// served to another cachelet as the owner (counted apart, never as a local hit or miss).
    /// </summary>
    public void Read(ReadSource source, long bytes, bool forPeer = false)
    {
        if (forPeer)
        {
            bool hit = source == ReadSource.LocalHit;
            Interlocked.Increment(ref hit ? ref _peerHits : ref _peerMisses);
            _peerReads.Add(1, hit ? _hit : _miss, _instance);
            return;
        }

        switch (source)
        {
            case ReadSource.LocalHit:
                Interlocked.Increment(ref _localHits);
                _hits.Add(1, _local, _instance);
                break;
            case ReadSource.LocalMiss:
                Interlocked.Increment(ref _localMisses);
                _misses.Add(1, _local, _instance);
                break;
            case ReadSource.RemoteHit:
                Interlocked.Increment(ref _remoteHits);
                _hits.Add(1, _remote, _instance);
                break;
            case ReadSource.RemoteMiss:
                Interlocked.Increment(ref _remoteMisses);
                _misses.Add(1, _remote, _instance);
                break;
            case ReadSource.StorageFallback:
                Interlocked.Increment(ref _fallbacks);
                _misses.Add(1, _fallback, _instance);
                break;
            default:
                Interlocked.Increment(ref _bypassCount);
                _bypasses.Add(1, _instance);
                break;
        }

        Interlocked.Add(ref _served, bytes);
        _bytesServed.Add(bytes, _instance);
    }

    /// <summary>Records a conditional version check.</summary>
    public void VersionCheck()
    {
        Interlocked.Increment(ref _checks);
        _versionChecks.Add(1, _instance);
    }

    /// <summary>Records bytes downloaded from storage.</summary>
    public void Fetched(long bytes)
    {
        Interlocked.Add(ref _fetched, bytes);
        _bytesFetched.Add(bytes, _instance);
    }

    /// <summary>Records bytes received from another cachelet.</summary>
    public void FromPeer(long bytes)
    {
        Interlocked.Add(ref _fromPeers, bytes);
        _bytesFromPeers.Add(bytes, _instance);
    }

    /// <summary>Records bytes uploaded to storage.</summary>
    public void Uploaded(long bytes)
    {
        Interlocked.Add(ref _written, bytes);
        _bytesWritten.Add(bytes, _instance);
    }

    /// <summary>Records a write through the cache.</summary>
    public void Write()
    {
        Interlocked.Increment(ref _writeCount);
        _writes.Add(1, _instance);
    }

    /// <summary>Records a peer's write committed here as the key's owner.</summary>
    public void PeerWrite()
    {
        Interlocked.Increment(ref _peerWriteCount);
        _peerWrites.Add(1, _instance);
    }

    /// <summary>Records a fallback to storage because the owner was unreachable.</summary>
    public void OwnerUnreachable()
    {
        Interlocked.Increment(ref _unreachable);
        _ownerUnreachable.Add(1, _instance);
    }

    /// <summary>Records a get served to a peer.</summary>
    public void PeerServed()
    {
        Interlocked.Increment(ref _peerServedCount);
        _peerServed.Add(1, _instance);
    }

    /// <summary>Records a miss downloaded by <paramref name="instances"/> instances at once.</summary>
    public void ScaledLoad(int instances)
    {
        Interlocked.Increment(ref _scaled);
        _scaledLoads.Add(1, _instance, new("instances", instances));
    }

    /// <summary>Records a range downloaded for another instance's scaled load.</summary>
    public void RangeLoadServed()
    {
        Interlocked.Increment(ref _rangesServed);
        _rangeLoadsServed.Add(1, _instance);
    }

    /// <summary>Records a helper's range that the requester had to fetch itself.</summary>
    public void RangeTakenBack()
    {
        Interlocked.Increment(ref _rangesTakenBack);
        _rangeFallbacks.Add(1, _instance);
    }

    /// <summary>Records a stale copy dropped on invalidation.</summary>
    public void Invalidated()
    {
        Interlocked.Increment(ref _invalidated);
        _invalidations.Add(1, _instance);
    }

    /// <summary>Records evictions.</summary>
    public void Evicted(int count)
    {
        if (count > 0)
        {
            Interlocked.Add(ref _evicted, count);
            _evictions.Add(count, _instance);
        }
    }

    /// <summary>Records the Memory Daemon's evictions (also counted by <see cref="Evicted"/>).</summary>
    public void EvictedForMemory(int count, long bytes)
    {
        if (count > 0)
        {
            Interlocked.Add(ref _memoryEvicted, count);
            Interlocked.Add(ref _memoryEvictedBytesCount, bytes);
            _memoryEvictions.Add(count, _instance);
            _memoryEvictedBytes.Add(bytes, _instance);
        }
    }

    /// <summary>Reads every counter.</summary>
    public CacheletCounters Snapshot() => new(
        Interlocked.Read(ref _localHits),
        Interlocked.Read(ref _localMisses),
        Interlocked.Read(ref _remoteHits),
        Interlocked.Read(ref _remoteMisses),
        Interlocked.Read(ref _bypassCount),
        Interlocked.Read(ref _checks),
        Interlocked.Read(ref _served),
        Interlocked.Read(ref _fetched),
        Interlocked.Read(ref _written),
        Interlocked.Read(ref _evicted),
        Interlocked.Read(ref _writeCount),
        BytesCached(),
        ObjectsCached(),
        Interlocked.Read(ref _unreachable),
        Interlocked.Read(ref _peerServedCount),
        Interlocked.Read(ref _invalidated),
        Interlocked.Read(ref _fromPeers),
        Interlocked.Read(ref _fallbacks),
        Interlocked.Read(ref _peerHits),
        Interlocked.Read(ref _peerMisses),
        Interlocked.Read(ref _peerWriteCount),
        Interlocked.Read(ref _scaled),
        Interlocked.Read(ref _rangesServed),
        Interlocked.Read(ref _rangesTakenBack),
        Interlocked.Read(ref _memoryEvicted),
        Interlocked.Read(ref _memoryEvictedBytesCount));

    /// <inheritdoc />
    public void Dispose() => _meter.Dispose();
}
