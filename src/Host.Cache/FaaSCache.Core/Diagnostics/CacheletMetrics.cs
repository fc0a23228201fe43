using System.Diagnostics.Metrics;

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
    private readonly Tally _localHits, _localMisses, _remoteHits, _remoteMisses, _fallbacks, _bypasses, _peerHits, _peerMisses;
    private readonly Tally _versionChecks, _bytesServed, _bytesFetched, _bytesWritten, _evictions, _writes, _ownerUnreachable;
    private readonly Tally _peerServed, _invalidations, _bytesFromPeers, _peerWrites, _scaledLoads, _rangeLoadsServed, _rangeFallbacks;
    private readonly Tally _memoryEvictions, _memoryEvictedBytes;

    /// <summary>Initializes a new instance of the <see cref="CacheletMetrics"/> class.</summary>
    /// <param name="instanceId">Tagged on every measurement.</param>
    /// <param name="bytesCached">Reads the bytes cached now.</param>
    /// <param name="objectsCached">Reads the objects cached now.</param>
    /// <param name="meterFactory">Optional factory (DI); a private meter otherwise.</param>
    public CacheletMetrics(string instanceId, Func<long> bytesCached, Func<long> objectsCached, IMeterFactory? meterFactory = null)
    {
        _meter = meterFactory?.Create(MeterName) ?? new Meter(MeterName);
        KeyValuePair<string, object?> instance = new("instance", instanceId);
        Tally Make(string name, string unit, string description) => new(_meter.CreateCounter<long>(name, unit, description), instance, null);
        Tally[] Tagged(string name, string unit, string description, string tag, params string[] values)
        {
            Counter<long> counter = _meter.CreateCounter<long>(name, unit, description);
            return [.. values.Select(v => new Tally(counter, instance, new(tag, v)))];
        }

        Tally[] hits = Tagged("faascache.hits", "{read}", "Reads served from a cache (type: local or remote)", "type", "local", "remote");
        (_localHits, _remoteHits) = (hits[0], hits[1]);
        Tally[] misses = Tagged("faascache.misses", "{read}", "Reads fetched from storage (type: local; remote when the owner fetched; fallback when a non-owner could not reach the owner)", "type", "local", "remote", "fallback");
        (_localMisses, _remoteMisses, _fallbacks) = (misses[0], misses[1], misses[2]);
        Tally[] peerReads = Tagged("faascache.peer_reads", "{read}", "Other cachelets' reads served as the owner (result: hit, or miss when fetched from storage first)", "result", "hit", "miss");
        (_peerHits, _peerMisses) = (peerReads[0], peerReads[1]);
        _bypasses = Make("faascache.bypasses", "{read}", "Reads of doNotCache keys");
        _versionChecks = Make("faascache.version_checks", "{request}", "Conditional requests made to check a cached version");
        _bytesServed = Make("faascache.bytes_served", "By", "Bytes handed to readers");
        _bytesFetched = Make("faascache.bytes_fetched", "By", "Bytes downloaded from storage");
        _bytesWritten = Make("faascache.bytes_written", "By", "Bytes uploaded to storage");
        _evictions = Make("faascache.evictions", "{object}", "Objects evicted to make room or expired");
        _writes = Make("faascache.writes", "{write}", "Writes through the cache");
        _ownerUnreachable = Make("faascache.owner_unreachable", "{call}", "Reads or writes that fell back to storage because the owner could not be reached");
        _peerServed = Make("faascache.peer_served", "{call}", "Gets served to other cachelets");
        _bytesFromPeers = Make("faascache.bytes_from_peers", "By", "Bytes received from other cachelets");
        _invalidations = Make("faascache.invalidations", "{object}", "Stale copies dropped on the owner's word");
        _peerWrites = Make("faascache.peer_writes", "{write}", "Other cachelets' writes committed as the owner");
        _scaledLoads = Make("faascache.scaled_loads", "{load}", "Misses downloaded as byte ranges by several instances at once (bandwidth scaling)");
        _rangeLoadsServed = Make("faascache.range_loads_served", "{range}", "Byte ranges downloaded from storage for another instance's scaled load");
        _rangeFallbacks = Make("faascache.range_fallbacks", "{range}", "Ranges of a scaled load that a helper could not deliver and the requester fetched itself");
        _memoryEvictions = Make("faascache.memory_evictions", "{object}", "Objects the Memory Daemon evicted because function memory plus cached bytes came within the headroom of the limit");
        _memoryEvictedBytes = Make("faascache.memory_evicted_bytes", "By", "Bytes the Memory Daemon freed");
        _meter.CreateObservableGauge("faascache.bytes_cached", () => new Measurement<long>(bytesCached(), instance), "By", "Bytes cached now");
        _meter.CreateObservableGauge("faascache.objects_cached", () => new Measurement<long>(objectsCached(), instance), "{object}", "Objects cached now");
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
            (source == ReadSource.LocalHit ? _peerHits : _peerMisses).Add(1);
            return;
        }

        Tally read = source switch
        {
            ReadSource.LocalHit => _localHits,
            ReadSource.LocalMiss => _localMisses,
            ReadSource.RemoteHit => _remoteHits,
            ReadSource.RemoteMiss => _remoteMisses,
            ReadSource.StorageFallback => _fallbacks,
            _ => _bypasses,
        };
        read.Add(1);
        _bytesServed.Add(bytes);
    }

    /// <summary>Records a conditional version check.</summary>
    public void VersionCheck() => _versionChecks.Add(1);

    /// <summary>Records bytes downloaded from storage.</summary>
    public void Fetched(long bytes) => _bytesFetched.Add(bytes);

    /// <summary>Records bytes received from another cachelet.</summary>
    public void FromPeer(long bytes) => _bytesFromPeers.Add(bytes);

    /// <summary>Records bytes uploaded to storage.</summary>
    public void Uploaded(long bytes) => _bytesWritten.Add(bytes);

    /// <summary>Records a write through the cache.</summary>
    public void Write() => _writes.Add(1);

    /// <summary>Records a peer's write committed here as the key's owner.</summary>
    public void PeerWrite() => _peerWrites.Add(1);

    /// <summary>Records a fallback to storage because the owner was unreachable.</summary>
    public void OwnerUnreachable() => _ownerUnreachable.Add(1);

    /// <summary>Records a get served to a peer.</summary>
    public void PeerServed() => _peerServed.Add(1);

    /// <summary>Records a miss downloaded by <paramref name="instances"/> instances at once.</summary>
    public void ScaledLoad(int instances) => _scaledLoads.Add(1, new("instances", instances));

    /// <summary>Records a range downloaded for another instance's scaled load.</summary>
    public void RangeLoadServed() => _rangeLoadsServed.Add(1);

    /// <summary>Records a helper's range that the requester had to fetch itself.</summary>
    public void RangeTakenBack() => _rangeFallbacks.Add(1);

    /// <summary>Records a stale copy dropped on invalidation.</summary>
    public void Invalidated() => _invalidations.Add(1);

    /// <summary>Records evictions.</summary>
    public void Evicted(int count) => _evictions.Add(count);

    /// <summary>Records the Memory Daemon's evictions (also counted by <see cref="Evicted"/>).</summary>
    public void EvictedForMemory(int count, long bytes)
    {
        if (count > 0)
        {
            _memoryEvictions.Add(count);
            _memoryEvictedBytes.Add(bytes);
        }
    }

    /// <summary>Reads every counter.</summary>
    public CacheletCounters Snapshot() => new(
        _localHits.Total,
        _localMisses.Total,
        _remoteHits.Total,
        _remoteMisses.Total,
        _bypasses.Total,
        _versionChecks.Total,
        _bytesServed.Total,
        _bytesFetched.Total,
        _bytesWritten.Total,
        _evictions.Total,
        _writes.Total,
        BytesCached(),
        ObjectsCached(),
        _ownerUnreachable.Total,
        _peerServed.Total,
        _invalidations.Total,
        _bytesFromPeers.Total,
        _fallbacks.Total,
        _peerHits.Total,
        _peerMisses.Total,
        _peerWrites.Total,
        _scaledLoads.Total,
        _rangeLoadsServed.Total,
        _rangeFallbacks.Total,
        _memoryEvictions.Total,
        _memoryEvictedBytes.Total);

    /// <inheritdoc />
    public void Dispose() => _meter.Dispose();

    /// <summary>One instrument's measurements with fixed tags, and their running total for in-process readers.</summary>
    private sealed class Tally(Counter<long> counter, KeyValuePair<string, object?> instance, KeyValuePair<string, object?>? tag)
    {
        private long _total;

        public long Total => Interlocked.Read(ref _total);

        public void Add(long amount, KeyValuePair<string, object?>? extra = null)
        {
            if (amount <= 0)
            {
                return;
            }

            Interlocked.Add(ref _total, amount);
            switch ((tag, extra))
            {
                case ({ } t, null):
                    counter.Add(amount, t, instance);
                    break;
                case (null, { } e):
                    counter.Add(amount, e, instance);
                    break;
                default:
                    counter.Add(amount, instance);
                    break;
            }
        }
    }
}
