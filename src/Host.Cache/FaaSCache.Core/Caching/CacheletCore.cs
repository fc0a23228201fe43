using FaaSCache.Caching.Index;

namespace FaaSCache.Caching;

/// <summary>
/// What the cachelet's parts share: the index and its one lock, the statistics, the marks that keep a read from caching
/// over a newer write, owner trust, and the maps to delete. The read path (<see cref="ReadPath"/>), the fills
/// (<see cref="MapFills"/>), the write path (<see cref="WritePath"/>) and the invalidations (<see cref="Invalidations"/>)
/// each own their own state and come here for this; methods named <c>...Locked</c> run under <see cref="Gate"/>.
/// </summary>
internal sealed class CacheletCore
{
    // Reads that began before a drop may carry the older version: they must not cache it (bounded, oldest forgotten first).
    private const int MaxInvalidationMarks = 4096;
    private readonly Dictionary<string, (long At, string Version)> _invalidatedAt = new(StringComparer.Ordinal);
    private readonly Queue<(string Key, long At)> _invalidationOrder = new();
    private readonly AccessStatistics _statistics = new();
    private readonly MapDeleter _maps;
    private long _writeSequence;
    private long _localVersion;
    private int _disposed;

    public CacheletCore(Cachelet facade, FaaSCacheOptions options, IBlobStore storage, SharedMemoryStore shm, IOwnerLocator owners, TimeProvider time, ILogger logger, IPeerClient? peers, BandwidthScaler? bandwidth)
    {
        Facade = facade;
        Options = options;
        Storage = storage;
        Shm = shm;
        Owners = owners;
        Time = time;
        Logger = logger;
        Peers = peers;
        Bandwidth = bandwidth;
        DoNotCache = new KeyGlob(options.DoNotCache);
        Trust = new OwnerTrust(owners, options, hasPeers: peers is not null, time);
        Entries = new CacheIndex<string, CacheEntry>(options.Eviction, options.EffectiveCapacityBytes, StringComparer.Ordinal);
        Metrics = new CacheletMetrics(shm.InstanceId, () => Entries.Bytes, () => Count);
        _maps = new MapDeleter(shm);
    }

    public Lock Gate { get; } = new();

    public Cachelet Facade { get; }

    public CacheIndex<string, CacheEntry> Entries { get; }

    public FaaSCacheOptions Options { get; }

    public IBlobStore Storage { get; }

    public SharedMemoryStore Shm { get; }

    public IOwnerLocator Owners { get; }

    public TimeProvider Time { get; }

    public ILogger Logger { get; }

    public IPeerClient? Peers { get; }

    public BandwidthScaler? Bandwidth { get; }

    public KeyGlob DoNotCache { get; }

    public OwnerTrust Trust { get; }

    public CacheletMetrics Metrics { get; }

    /// <summary>Gets or sets the ring before the last membership change: keys that moved are fetched from their old owner.</summary>
    public ConsistentHashRing? PreviousRing { get; set; }

    public bool IsDisposed => Volatile.Read(ref _disposed) != 0;

    public ConsistencyPolicy Policy => Options.Policy;

    public bool ChecksStorageVersion => Policy.ReadTarget == ReadTarget.StorageVersion;

    public bool ReadsFromOwner => Policy.ReadTarget == ReadTarget.Owner;

    public bool WritesToOwner => Policy.WriteTarget == WriteTarget.Owner;

    /// <summary>Gets a value indicating whether the presets' reads trust the owner's copy and their writes are in storage before they are acknowledged.</summary>
    public bool RevalidatesAfterChanges => Trust.Applies;

    public bool Unsettled => Trust.Unsettled;

    /// <summary>Gets the count of writes that changed this cachelet's index (a read started before one must not cache over it).</summary>
    public long WriteSequence
    {
        get
        {
            lock (Gate)
            {
                return _writeSequence;
            }
        }
    }

    /// <summary>Gets the number of cached objects.</summary>
    public int Count
    {
        get
        {
            lock (Gate)
            {
                return Entries.Count;
            }
        }
    }

    /// <summary>True when <paramref name="key"/> is cached (any version).</summary>
    public bool Contains(string key)
    {
        lock (Gate)
        {
            return Entries.ContainsKey(key);
        }
    }

    /// <summary>Removes <paramref name="key"/> from the cache (the map goes when its last lease does). Dirty objects stay.</summary>
    public bool Remove(string key)
    {
        var dead = new List<CacheEntry>();
        bool removed;
        lock (Gate)
        {
            removed = Entries.TryGetValue(key, out CacheEntry? entry) && !entry.Dirty;
            if (removed)
            {
                DetachLocked(entry!, dead);
            }
        }

        DeleteMaps(dead);
        return removed;
    }

    /// <summary>Marks the parts disposed; false when they already were.</summary>
    public bool MarkDisposed() => Interlocked.Exchange(ref _disposed, 1) == 0;

    public void ThrowIfDisposed() => ObjectDisposedException.ThrowIf(IsDisposed, Facade);

    public Task StopMapDeleterAsync() => _maps.StopAsync();

    public string NextLocalVersion(string prefix) => $"{prefix}-{Shm.InstanceId}-{Interlocked.Increment(ref _localVersion)}";

    /// <summary>Counts a write into the index (under the lock).</summary>
    public long NextWriteSequenceLocked() => ++_writeSequence;

    /// <summary>
    /// Makes room for <paramref name="size"/> bytes and reserves them (§3.4); false (evicting nothing) when the object
    /// cannot be cached because what could be evicted would not free enough.
    /// </summary>
    public bool TryReserveLocked(long size, List<CacheEntry> dead)
    {
        // The shared-memory directories' own limit: an object must also fit in one of them (part of §3.4's capacity).
        long shortOfRoom = SharedMemoryMap.HeaderSize + size - Shm.LargestFreeBytes();
        if (Entries.TryReserve(size, Time.GetUtcNow(), shortOfRoom) is not { } victims)
        {
            return false;
        }

        foreach (CacheEntry victim in victims)
        {
            // Space the directory needs now is freed now, not by the background deleter.
            victim.FreeSynchronously = shortOfRoom > 0;
            StatsLocked(victim.Key).Evictions++;
            dead.Add(victim);
        }

        if (victims.Count > 0)
        {
            Metrics.Evicted(victims.Count);
        }

        return true;
    }

    public void UnreserveLocked(long size) => Entries.Unreserve(size);

    /// <summary>Adds an entry whose bytes are already reserved, replacing any older version of the key.</summary>
    public void InsertLocked(CacheEntry entry, List<CacheEntry> dead)
    {
        if (Entries.Insert(entry, Time.GetUtcNow()) is { Pinned: false } old)
        {
            dead.Add(old);
        }

        // A copy entering the index while views may differ is suspect until a check after they settled.
        if (RevalidatesAfterChanges && !entry.Dirty && Unsettled)
        {
            entry.Suspect = true;
        }
    }

    public void TouchLocked(CacheEntry entry) => Entries.Touch(entry);

    /// <summary>Takes an entry out of the index; its map is deleted now if nobody uses it, else on the last release.</summary>
    public void DetachLocked(CacheEntry entry, List<CacheEntry> dead)
    {
        if (Entries.Detach(entry) && !entry.Pinned)
        {
            dead.Add(entry);
        }
    }

    public bool IsExpiredLocked(CacheEntry entry) => entry.IsExpiredAt(Time.GetUtcNow());

    public bool IsLarge(long size) => Entries.IsLarge(size);

    public AccessStatistics.StatsState StatsLocked(string key) => _statistics.Of(key, Entries.ContainsKey);

    public void RecordAccessLocked(string key, AccessKind? kind) => _statistics.Record(key, kind, Time.GetUtcNow(), Entries.ContainsKey);

    public ObjectStatistics? SnapshotLocked(string key) => _statistics.Find(key) is { } s ? SnapshotLocked(key, s) : null;

    public IReadOnlyList<ObjectStatistics> SnapshotAllLocked() => [.. _statistics.All.Select(kv => SnapshotLocked(kv.Key, kv.Value))];

    /// <summary>Remembers that copies of <paramref name="key"/> other than <paramref name="version"/> were dropped now.</summary>
    public void MarkInvalidatedLocked(string key, string version)
    {
        long at = ++_writeSequence;
        _invalidatedAt[key] = (at, version);
        _invalidationOrder.Enqueue((key, at));
        while (_invalidationOrder.Count > MaxInvalidationMarks)
        {
            (string oldKey, long oldAt) = _invalidationOrder.Dequeue();
            if (_invalidatedAt.TryGetValue(oldKey, out (long At, string Version) mark) && mark.At == oldAt)
            {
                _invalidatedAt.Remove(oldKey);
            }
        }
    }

    /// <summary>True when a copy of <paramref name="key"/> other than <paramref name="version"/> was dropped after <paramref name="writesBefore"/>.</summary>
    public bool InvalidatedSinceLocked(string key, string version, long writesBefore)
        => _invalidatedAt.TryGetValue(key, out (long At, string Version) mark) && mark.At > writesBefore && mark.Version != version;

    /// <summary>True when <paramref name="hit"/> must be checked against storage before it is served (takes the lock).</summary>
    public bool MustRevalidate(CacheEntry hit)
    {
        if (!RevalidatesAfterChanges)
        {
            return false;
        }

        lock (Gate)
        {
            return !hit.Dirty && (hit.Suspect || Unsettled);
        }
    }

    /// <summary>Storage confirmed <paramref name="hit"/> in a check begun at <paramref name="epoch"/>: trusted again if nothing changed since and views had settled.</summary>
    public void Confirmed(CacheEntry hit, long epoch, bool settledAtStart)
    {
        if (!settledAtStart)
        {
            return;
        }

        lock (Gate)
        {
            if (Trust.Epoch == epoch && !hit.Detached)
            {
                hit.Suspect = false;
            }
        }
    }

    /// <summary>Every copy becomes suspect and every read checks storage for the settle period.</summary>
    public void Unsettle(string reason)
    {
        int marked = 0;
        lock (Gate)
        {
            // The new epoch under the lock: a check that confirms a copy (Confirmed, under the lock too) sees it or came before.
            if (!Trust.Unsettle())
            {
                return;
            }

            foreach (CacheEntry entry in Entries.Entries)
            {
                if (!entry.Dirty)
                {
                    entry.Suspect = true;
                    marked++;
                }
            }
        }

        Logger.LogInformation(
            "{Self}: {Reason}; its {Count} cached copies are checked against storage before they are served again",
            Owners.SelfId, reason, marked);
    }

    /// <summary>A peer's version query: the cached version, else storage's (null when the blob does not exist).</summary>
    public async Task<string?> OwnerVersionAsync(string key, CancellationToken cancellationToken)
    {
        lock (Gate)
        {
            // A suspect copy (OwnerTrust) answers nothing: storage's version is the truth then.
            if (Entries.TryGetValue(key, out CacheEntry? entry) && !IsExpiredLocked(entry)
                && !(RevalidatesAfterChanges && !entry.Dirty && (entry.Suspect || Unsettled)))
            {
                return entry.Version;
            }
        }

        return await Storage.GetVersionAsync(key, cancellationToken).ConfigureAwait(false);
    }

    public void OwnerUnreachable(string owner, string key, Exception e)
    {
        Metrics.OwnerUnreachable();
        Logger.LogWarning("Owner {Owner} of {Key} is unreachable ({Reason}); using storage instead", owner, key, e.Message);
    }

    /// <summary>Releases one reference taken by a lease or an active-reference caller.</summary>
    public void Release(CacheEntry entry)
    {
        bool delete;
        lock (Gate)
        {
            entry.RefCount--;
            delete = entry.Detached && !entry.Pinned;
        }

        if (delete)
        {
            DeleteMap(entry.Map);
        }
    }

    /// <summary>Large maps are unmapped and unlinked in the background (<see cref="MapDeleter"/>), off the reader's path.</summary>
    public void DeleteMap(SharedMemoryMap map)
    {
        if (IsDisposed)
        {
            Shm.Delete(map);
            return;
        }

        _maps.Delete(map);
    }

    public void DeleteMaps(List<CacheEntry> dead)
    {
        foreach (CacheEntry e in dead)
        {
            if (e.FreeSynchronously)
            {
                Shm.Delete(e.Map);
            }
            else
            {
                DeleteMap(e.Map);
            }
        }
    }

    /// <summary>A map that landed in the spill folder (no shared-memory directory had room) is served, never cached.</summary>
    public bool KeepReservation(SharedMemoryMap map, bool reserved)
    {
        if (reserved && !map.IsShared)
        {
            lock (Gate)
            {
                UnreserveLocked(map.ContentLength);
            }

            return false;
        }

        return reserved;
    }

    private ObjectStatistics SnapshotLocked(string key, AccessStatistics.StatsState s)
        => AccessStatistics.Snapshot(key, s, Entries.TryGetValue(key, out CacheEntry? entry) ? entry : null, entry is null && Owners.IsLocalOwner(key));
}
