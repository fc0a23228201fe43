using FaaSCache.Bandwidth;
using FaaSCache.Caching.Index;
using FaaSCache.Cluster;
using FaaSCache.Diagnostics;
using FaaSCache.Options;
using FaaSCache.Ownership;
using FaaSCache.SharedMemory;
using FaaSCache.Storage;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace FaaSCache.Caching;

/// <summary>
/// One host instance's part of the app's cache (§3): objects in shared memory, read paths LH/LM
/// (RH/RM with peers), writes under the app's consistency preset, eviction under its policy.
/// </summary>
public sealed partial class Cachelet : IObjectCache, IPeerServingCache, IVersionedCache, ICacheAdmin, IAsyncDisposable, IDisposable
{
    private readonly Lock _gate = new();
    private readonly CacheIndex<string, CacheEntry> _entries;
    private readonly Dictionary<string, Task<bool>> _inflight = new(StringComparer.Ordinal);
    private readonly FaaSCacheOptions _options;
    private readonly IBlobStore _storage;
    private readonly SharedMemoryStore _shm;
    private readonly bool _ownsShm;
    private readonly IOwnerLocator _owners;
    private readonly TimeProvider _time;
    private readonly ILogger _logger;
    private readonly KeyGlob _doNotCache;
    private readonly MapDeleter _maps;
    private readonly ITimer? _expirySweep;
    private long _localVersion;
    private int _disposed;
    private IAsyncDisposable? _container;

    /// <summary>Initializes a new instance of the <see cref="Cachelet"/> class.</summary>
    /// <param name="options">Validated options.</param>
    /// <param name="storage">Blob storage.</param>
    /// <param name="sharedMemory">The instance's shared-memory store.</param>
    /// <param name="owners">Owner look-up; null means a single instance that owns every key.</param>
    /// <param name="time">Clock (tests pass a fake one).</param>
    /// <param name="logger">Logger.</param>
    /// <param name="ownsSharedMemory">Dispose <paramref name="sharedMemory"/> with the cachelet.</param>
    /// <param name="peers">The other cachelets of the app; null for a single instance.</param>
    /// <param name="bandwidth">§4 bandwidth scaling (profile, planner, controller); null: every miss is one download.</param>
    public Cachelet(
        FaaSCacheOptions options,
        IBlobStore storage,
        SharedMemoryStore sharedMemory,
        IOwnerLocator? owners = null,
        TimeProvider? time = null,
        ILogger<Cachelet>? logger = null,
        bool ownsSharedMemory = true,
        IPeerClient? peers = null,
        Bandwidth.BandwidthScaler? bandwidth = null)
    {
        FaaSCacheOptionsValidator.ThrowIfInvalid(new FaaSCacheOptionsValidator().Validate(null, options));

        _options = options;
        _storage = storage;
        _shm = sharedMemory;
        _ownsShm = ownsSharedMemory;
        _owners = owners ?? RingOwnerLocator.SingleInstance(sharedMemory.InstanceId);
        _time = time ?? TimeProvider.System;
        _logger = (ILogger?)logger ?? NullLogger.Instance;
        _doNotCache = new KeyGlob(options.DoNotCache);
        _peers = peers;
        _bandwidth = bandwidth;
        _trust = new OwnerTrust(_owners, options, hasPeers: peers is not null, _time);
        _owners.RingChanged += OnRingChanged;
        _owners.LeaseChanged += OnLeaseChanged;

        _entries = new CacheIndex<string, CacheEntry>(options.Eviction, options.EffectiveCapacityBytes, StringComparer.Ordinal);
        Metrics = new CacheletMetrics(sharedMemory.InstanceId, () => _entries.Bytes, () => Count);
        _writeBack = StartWriteBack();
        _maps = new MapDeleter(sharedMemory);
        _expirySweep = StartExpirySweep();
    }

    /// <summary>Gets the options in force.</summary>
    public FaaSCacheOptions Options => _options;

    /// <summary>Gets the capacity in bytes.</summary>
    public long CapacityBytes => _entries.CapacityBytes;

    /// <summary>Gets the bytes cached (and reserved for transfers under way).</summary>
    public long BytesCached => _entries.Bytes;

    /// <summary>Gets the number of cached objects.</summary>
    public int Count
    {
        get
        {
            lock (_gate)
            {
                return _entries.Count;
            }
        }
    }

    /// <summary>Gets the metrics.</summary>
    public CacheletMetrics Metrics { get; }

    /// <summary>Gets the shared-memory store.</summary>
    public SharedMemoryStore SharedMemory => _shm;

    /// <summary>Gets the storage.</summary>
    public IBlobStore Storage => _storage;

    /// <summary>Gets the id of this instance.</summary>
    public string InstanceId => _owners.SelfId;

    private ConsistencyPolicy Policy => _options.Policy;

    private bool ChecksStorageVersion => Policy.ReadTarget == ReadTarget.StorageVersion;

    /// <summary>True when <paramref name="key"/> is cached (any version).</summary>
    public bool Contains(string key)
    {
        lock (_gate)
        {
            return _entries.ContainsKey(key);
        }
    }

    /// <summary>True when <paramref name="key"/> matches a <c>doNotCache</c> pattern.</summary>
    public bool IsExcluded(string key) => _doNotCache.IsMatch(key);

    /// <summary>Removes <paramref name="key"/> from the cache (the map goes when its last lease does). Dirty objects stay.</summary>
    public bool Remove(string key)
    {
        var dead = new List<CacheEntry>();
        bool removed;
        lock (_gate)
        {
            removed = _entries.TryGetValue(key, out CacheEntry? entry) && !entry.Dirty;
            if (removed)
            {
                DetachLocked(entry!, dead);
            }
        }

        DeleteMaps(dead);
        return removed;
    }

    /// <summary>Releases one reference taken by a lease or an active-reference caller.</summary>
    internal void Release(CacheEntry entry)
    {
        bool delete;
        lock (_gate)
        {
            entry.RefCount--;
            delete = entry.Detached && !entry.Pinned;
        }

        if (delete)
        {
            DeleteMap(entry.Map);
        }
    }

    /// <summary>Deletes a private map that never entered the cache.</summary>
    internal void DeleteTransient(SharedMemoryMap map) => DeleteMap(map);

    /// <summary>Large maps are unmapped and unlinked in the background (<see cref="MapDeleter"/>), off the reader's path.</summary>
    private void DeleteMap(SharedMemoryMap map)
    {
        if (_disposed != 0)
        {
            _shm.Delete(map);
            return;
        }

        _maps.Delete(map);
    }

    /// <summary>A map that landed in the spill folder (no shared-memory directory had room) is served, never cached.</summary>
    private bool KeepReservation(SharedMemoryMap map, bool reserved)
    {
        if (reserved && !map.IsShared)
        {
            lock (_gate)
            {
                UnreserveLocked(map.ContentLength);
            }

            return false;
        }

        return reserved;
    }

    private string NextLocalVersion(string prefix) => $"{prefix}-{_shm.InstanceId}-{Interlocked.Increment(ref _localVersion)}";

    private void DeleteMaps(List<CacheEntry> dead)
    {
        foreach (CacheEntry e in dead)
        {
            if (e.FreeSynchronously)
            {
                _shm.Delete(e.Map);
            }
            else
            {
                DeleteMap(e.Map);
            }
        }
    }

    /// <summary>Flushes pending writes, then deletes every map.</summary>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        if (_expirySweep is not null)
        {
            await _expirySweep.DisposeAsync().ConfigureAwait(false);
        }

        _owners.RingChanged -= OnRingChanged;
        _owners.LeaseChanged -= OnLeaseChanged;
        await _writeBack.StopAsync().ConfigureAwait(false);
        await _maps.StopAsync().ConfigureAwait(false);
        var all = new List<CacheEntry>();
        lock (_gate)
        {
            all.AddRange(_entries.Clear().Where(e => !e.Pinned));
        }

        DeleteMaps(all);
        Metrics.Dispose();
        if (_ownsShm)
        {
            _shm.Dispose();
        }

        if (_container is not null)
        {
            await _container.DisposeAsync().ConfigureAwait(false); // disposes this again (a no-op) and the store with it
        }
    }

    /// <summary>Makes disposing this cachelet dispose <paramref name="container"/> too (<see cref="Hosting.CacheletBuilder"/>'s container).</summary>
    internal void DisposeWith(IAsyncDisposable container) => _container = container;

    /// <inheritdoc />
    public void Dispose() => DisposeAsync().AsTask().GetAwaiter().GetResult();
}
