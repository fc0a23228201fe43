namespace FaaSCache.Caching;

/// <summary>
/// One host instance's part of the app's cache (§3): objects in shared memory, read paths LH/LM (RH/RM with peers),
/// writes under the app's consistency preset, eviction under its policy. A façade: the index and what the parts share
/// are in <see cref="CacheletCore"/>; reads in <see cref="ReadPath"/> over <see cref="MapFills"/>, writes in
/// <see cref="WritePath"/>, dropped copies in <see cref="Invalidations"/>, the version-keyed face in
/// <see cref="VersionedCopies"/>, pre-warm loads in <see cref="PrewarmLoads"/>; owner trust in <see cref="OwnerTrust"/>.
/// </summary>
public sealed class Cachelet : IObjectCache, IPeerServingCache, IVersionedCache, ICacheAdmin, IAsyncDisposable, IDisposable
{
    /// <summary>Objects from this size up are streamed to a requesting peer while the owner downloads them.</summary>
    public const long PipelineThreshold = MapFills.PipelineThreshold;

    private readonly CacheletCore _core;
    private readonly ReadPath _reads;
    private readonly MapFills _fills;
    private readonly WritePath _writes;
    private readonly Invalidations _invalidations;
    private readonly VersionedCopies _copies;
    private readonly PrewarmLoads _prewarm;
    private readonly Evictions _evictions;
    private readonly bool _ownsShm;
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
        BandwidthScaler? bandwidth = null)
    {
        FaaSCacheOptionsValidator.ThrowIfInvalid(new FaaSCacheOptionsValidator().Validate(null, options));
        _ownsShm = ownsSharedMemory;
        _core = new CacheletCore(
            this, options, storage, sharedMemory, owners ?? RingOwnerLocator.SingleInstance(sharedMemory.InstanceId),
            time ?? TimeProvider.System, (ILogger?)logger ?? NullLogger.Instance, peers, bandwidth);
        _fills = new MapFills(_core);
        _reads = new ReadPath(_core, _fills);
        _invalidations = new Invalidations(_core);
        _writes = new WritePath(_core, _invalidations);
        _copies = new VersionedCopies(_core);
        _prewarm = new PrewarmLoads(_core, _reads, _fills);
        _core.Owners.RingChanged += OnRingChanged;
        _core.Owners.LeaseChanged += OnLeaseChanged;
        _evictions = new Evictions(_core);
    }

    /// <summary>
    /// Raised after a write through this cachelet took effect (the cache triggers of §3: functions
    /// triggered by a blob fire at once instead of waiting for storage polling). Handlers must not block.
    /// </summary>
    public event EventHandler<BlobWrittenEventArgs>? Written;

    /// <summary>Raised when storage got a write: at once for sync persistence, after the background write for async.</summary>
    public event EventHandler<BlobWrittenEventArgs>? Persisted;

    /// <summary>Gets the options in force.</summary>
    public FaaSCacheOptions Options => _core.Options;

    /// <summary>Gets the capacity in bytes.</summary>
    public long CapacityBytes => _core.Entries.CapacityBytes;

    /// <summary>Gets the bytes cached (and reserved for transfers under way).</summary>
    public long BytesCached => _core.Entries.Bytes;

    /// <summary>
    /// Gets the memory the cache holds: the cached objects, and the files of deleted maps kept for reuse (their tmpfs
    /// pages are charged to the app as the objects' were, until deleted).
    /// </summary>
    public long CacheMemoryBytes => BytesCached + _core.Shm.KeptBytes;

    /// <summary>Gets the number of cached objects.</summary>
    public int Count => _core.Count;

    /// <summary>Gets the metrics.</summary>
    public CacheletMetrics Metrics => _core.Metrics;

    /// <summary>Gets the shared-memory store.</summary>
    public SharedMemoryStore SharedMemory => _core.Shm;

    /// <summary>Gets the storage.</summary>
    public IBlobStore Storage => _core.Storage;

    /// <summary>Gets the id of this instance.</summary>
    public string InstanceId => _core.Owners.SelfId;

    /// <summary>Gets a value indicating whether this cachelet talks to peers.</summary>
    public bool HasPeers => _core.Peers is not null;

    /// <summary>Gets §4's bandwidth scaling, when enabled: the voter reads its recent scaled loads.</summary>
    public BandwidthScaler? Bandwidth => _core.Bandwidth;

    /// <summary>Gets a value indicating whether this cachelet's copies may be served as the owner's without a storage check.</summary>
    public bool Settled => !_core.Unsettled;

    /// <summary>Gets or sets how long disposal waits for pending writes before giving up on them (they are logged as lost).</summary>
    public TimeSpan ShutdownFlushTimeout
    {
        get => _writes.WriteBack.ShutdownFlushTimeout;
        set => _writes.WriteBack.ShutdownFlushTimeout = value;
    }

    /// <summary>Gets the asynchronous writes not yet in storage.</summary>
    public long PendingWrites => _writes.WriteBack.Pending;

    /// <summary>Gets the keys whose asynchronous write was abandoned at shutdown.</summary>
    public IReadOnlyList<string> LostWrites => _writes.WriteBack.Lost;

    /// <inheritdoc />
    public Task<ObjectLease> ReadAsync(string key, DownloadFollower? follower, CancellationToken cancellationToken) => _reads.ReadAsync(key, forward: true, follower, cancellationToken);

    /// <inheritdoc />
    public async Task<PeerGetServe?> ServePeerGetAsync(string key, bool fetchIfMissing, bool follow, CancellationToken cancellationToken = default)
    {
        _core.ThrowIfDisposed();
        _core.Metrics.PeerServed();
        if (fetchIfMissing)
        {
            // A follower only when the peer takes a stream (a whole get); a range get waits for the whole object.
            return await DownloadFollower.ReadAndServeAsync(follow, f => _reads.ReadAsync(key, forward: false, f, cancellationToken)).ConfigureAwait(false);
        }

        return _reads.CachedForPeer(key) is { } cached ? PeerGetServe.Whole(cached, hit: true) : null;
    }

    /// <summary>
    /// Loads the current version of <paramref name="key"/> from storage into free capacity, for pre-warm (§3.3): it never
    /// evicts, records no access (a pre-warmed object must earn its next selection by being read), and a read of the
    /// same key meanwhile waits for it rather than downloading it twice. Cancelling (an invocation started) leaves
    /// nothing behind, and a read waiting for it fetches the key itself.
    /// </summary>
    /// <param name="key">The key, <c>container/blob</c>.</param>
    /// <param name="cancellationToken">Cancels the download.</param>
    /// <returns>What the load did.</returns>
    public async Task<PrewarmLoadResult> PrewarmAsync(string key, CancellationToken cancellationToken = default)
    {
        _core.ThrowIfDisposed();
        BlobKey.Parse(key);
        return await _prewarm.PrewarmAsync(key, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Writes <paramref name="data"/> to <paramref name="key"/>.</summary>
    public Task<WriteReceipt> WriteAsync(string key, ReadOnlyMemory<byte> data, CancellationToken cancellationToken = default)
        => WriteAsync(key, data, createOnly: false, cancellationToken);

    /// <summary>
    /// Writes <paramref name="data"/> to <paramref name="key"/> only if no blob of that name exists (Put Blob with
    /// <c>If-None-Match: *</c>), atomically across the app's instances: under an owner preset the key's owner decides
    /// (storage's conditional upload when it persists synchronously; its own copy, pending writes and storage, under its
    /// per-key write lock, when it persists later); under a local preset storage decides (the write is persisted at once,
    /// conditionally, even under <c>localAsync</c>; with <c>persist: none</c> nothing reaches storage, so the writer
    /// decides for itself only). Throws <see cref="BlobAlreadyExistsException"/>, nothing written, when the blob exists;
    /// otherwise the write is an ordinary one (one cache trigger, on the instance that committed it).
    /// </summary>
    public Task<WriteReceipt> CreateAsync(string key, ReadOnlyMemory<byte> data, CancellationToken cancellationToken = default)
        => WriteAsync(key, data, createOnly: true, cancellationToken);

    /// <summary>Writes the rest of <paramref name="data"/> to <paramref name="key"/>, streaming into shared memory.</summary>
    public async Task<WriteReceipt> WriteAsync(string key, Stream data, CancellationToken cancellationToken = default)
    {
        _core.ThrowIfDisposed();
        BlobKey.Parse(key);
        if (!data.CanSeek)
        {
            // The map's size is fixed at creation, so an unsized stream is gathered first.
            var buffered = new MemoryStream();
            await data.CopyToAsync(buffered, cancellationToken).ConfigureAwait(false);
            return await WriteAsync(key, buffered.GetBuffer().AsMemory(0, (int)buffered.Length), cancellationToken).ConfigureAwait(false);
        }

        (SharedMemoryMap map, long copied) = await _writes.MapOfAsync(data, data.Length - data.Position, cancellationToken).ConfigureAwait(false);
        return await _writes.CommitAsync(key, map, forward: true, copied, createOnly: false, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Writes the content of a map another process created (a worker's output) without copying it: the cache adopts the file.</summary>
    public async Task<WriteReceipt> WriteMapAsync(string key, string mapName, long? count = null, CancellationToken cancellationToken = default)
    {
        _core.ThrowIfDisposed();
        BlobKey.Parse(key);
        SharedMemoryMap map = _core.Shm.AdoptHandedOver(mapName, count);
        return await _writes.CommitAsync(key, map, forward: true, copiedIn: 0, createOnly: false, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// Serves a peer's write: this cachelet is the owner and commits it under the app's preset; a create-only one
    /// (<paramref name="createOnly"/>) is decided here (<see cref="CreateAsync"/>) and throws
    /// <see cref="BlobAlreadyExistsException"/> when the blob exists.
    /// </summary>
    public async Task<PeerWriteResult> AcceptPeerWriteAsync(string key, Stream content, long length, bool createOnly = false, CancellationToken cancellationToken = default)
    {
        _core.ThrowIfDisposed();
        BlobKey.Parse(key);
        (SharedMemoryMap map, long copied) = await _writes.MapOfAsync(content, length, cancellationToken).ConfigureAwait(false);
        WriteReceipt receipt = await _writes.CommitAsync(key, map, forward: false, copied, createOnly, cancellationToken).ConfigureAwait(false);
        return new PeerWriteResult(receipt.Version, receipt.Persisted);
    }

    /// <summary>Waits until every asynchronous write made so far is in storage.</summary>
    public Task FlushAsync(CancellationToken cancellationToken = default) => _writes.WriteBack.FlushAsync(cancellationToken);

    /// <summary>
    /// Storage took a write of <paramref name="key"/> that did not go through the cache (its new ETag
    /// <paramref name="version"/>; null for a delete or when storage did not say): every instance's copy is dropped as
    /// after a cache write (§3.2), and this returns once every member answered (at most the settle period).
    /// </summary>
    public async Task InvalidateEverywhereAsync(string key, string? version, CancellationToken cancellationToken = default)
    {
        _core.ThrowIfDisposed();
        BlobKey.Parse(key);
        await _invalidations.InvalidateEverywhereAsync(key, version, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Drops a cached copy of <paramref name="key"/> whose version is not <paramref name="version"/> (the owner wrote a new one).</summary>
    public bool Invalidate(string key, string version) => _invalidations.Drop(key, version);

    /// <summary>Serves a peer's version query: the cached version, else storage's (null when the blob does not exist).</summary>
    public Task<string?> GetOwnerVersionAsync(string key, CancellationToken cancellationToken = default) => _core.OwnerVersionAsync(key, cancellationToken);

    /// <summary>
    /// §4, bandwidth scaling: fetches a range of one version from storage for another instance's parallel load and hands
    /// it on as it arrives (nothing is cached; the requester assembles and checks the object). A storage sample for the
    /// profile, since the bytes cross this instance's storage link.
    /// </summary>
    public async Task<T> ServeRangeLoadAsync<T>(string key, string version, long offset, long length, BlobBodyConsumer<T> consume, CancellationToken cancellationToken = default)
    {
        _core.ThrowIfDisposed();
        ArgumentNullException.ThrowIfNull(consume);
        _core.Metrics.RangeLoadServed();
        return await _fills.FetchRangeFromStorageAsync(key, version, offset, length, consume, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// Finds <paramref name="key"/> at exactly <paramref name="version"/>; optionally takes an active reference (the object
    /// is then never evicted). Counts a local hit, or a local miss when that version is not cached.
    /// </summary>
    public bool TryGetVersion(string key, string version, bool addReference, out string mapName, out long length)
        => _copies.TryGetVersion(key, version, addReference, out mapName, out length);

    /// <summary>
    /// Caches a map the caller wrote in this instance's map directory as <paramref name="key"/> at
    /// <paramref name="version"/> (what storage holds; nothing is uploaded). On success the cache owns the file.
    /// False, leaving the file to the caller, when it does not fit or cannot be opened.
    /// </summary>
    public bool TryAdoptVersion(string key, string version, string mapName, bool addReference) => _copies.TryAdoptVersion(key, version, mapName, addReference);

    /// <summary>True when <paramref name="key"/> is cached at exactly <paramref name="version"/>; records no access.</summary>
    public bool HasVersion(string key, string version) => _copies.HasVersion(key, version);

    /// <inheritdoc />
    public bool RemoveVersion(string key, string version) => HasVersion(key, version) && Remove(key);

    /// <summary>Drops one active reference taken by <see cref="TryGetVersion"/> or <see cref="TryAdoptVersion"/>.</summary>
    public void ReleaseVersion(string key, string version) => _copies.ReleaseVersion(key, version);

    /// <summary>True when <paramref name="key"/> is cached (any version).</summary>
    public bool Contains(string key) => _core.Contains(key);

    /// <summary>True when <paramref name="key"/> matches a <c>doNotCache</c> pattern.</summary>
    public bool IsExcluded(string key) => _core.DoNotCache.IsMatch(key);

    /// <summary>Removes <paramref name="key"/> from the cache (the map goes when its last lease does). Dirty objects stay.</summary>
    public bool Remove(string key) => _core.Remove(key);

    /// <summary>Statistics of one key, or null when it was never accessed.</summary>
    public ObjectStatistics? GetStatistics(string key)
    {
        lock (_core.Gate)
        {
            return _core.SnapshotLocked(key);
        }
    }

    /// <summary>Statistics of every tracked key.</summary>
    public IReadOnlyList<ObjectStatistics> GetAllStatistics()
    {
        lock (_core.Gate)
        {
            return _core.SnapshotAllLocked();
        }
    }

    /// <summary>
    /// Frees at least <paramref name="bytes"/> of the cache's memory, or all it can (§3.4's Memory Daemon): first the files
    /// kept for reuse, then objects in eviction-policy order, never one in use or not yet persisted (<see cref="Evictions"/>).
    /// </summary>
    public MemoryEvictionResult EvictForMemory(long bytes) => _evictions.ForMemory(bytes);

    /// <summary>Frees every expired object that nobody uses; returns how many went.</summary>
    internal int SweepExpired() => _evictions.SweepExpired();

    /// <summary>Releases one reference taken by a lease or an active-reference caller.</summary>
    internal void Release(CacheEntry entry) => _core.Release(entry);

    /// <summary>Deletes a private map that never entered the cache.</summary>
    internal void DeleteTransient(SharedMemoryMap map) => _core.DeleteMap(map);

    internal void OnWritten(BlobWrittenEventArgs args) => Written?.Invoke(this, args);

    internal void OnPersisted(BlobWrittenEventArgs args) => Persisted?.Invoke(this, args);

    /// <summary>Makes disposing this cachelet dispose <paramref name="container"/> too (<see cref="Hosting.CacheletBuilder"/>'s container).</summary>
    internal void DisposeWith(IAsyncDisposable container) => _container = container;

    /// <summary>Flushes pending writes, then deletes every map.</summary>
    public async ValueTask DisposeAsync()
    {
        if (!_core.MarkDisposed())
        {
            return;
        }

        await _evictions.DisposeAsync().ConfigureAwait(false);

        _core.Owners.RingChanged -= OnRingChanged;
        _core.Owners.LeaseChanged -= OnLeaseChanged;
        await _writes.WriteBack.StopAsync().ConfigureAwait(false);
        await _core.StopMapDeleterAsync().ConfigureAwait(false);
        var all = new List<CacheEntry>();
        lock (_core.Gate)
        {
            all.AddRange(_core.Entries.Clear().Where(e => !e.Pinned));
        }

        _core.DeleteMaps(all);
        _core.Metrics.Dispose();
        if (_ownsShm)
        {
            _core.Shm.Dispose();
        }

        if (_container is not null)
        {
            await _container.DisposeAsync().ConfigureAwait(false); // disposes this again (a no-op) and the store with it
        }
    }

    /// <inheritdoc />
    public void Dispose() => DisposeAsync().AsTask().GetAwaiter().GetResult();

    private async Task<WriteReceipt> WriteAsync(string key, ReadOnlyMemory<byte> data, bool createOnly, CancellationToken cancellationToken)
    {
        _core.ThrowIfDisposed();
        BlobKey.Parse(key);
        return await _writes.CommitAsync(key, _writes.MapOf(data), forward: true, copiedIn: data.Length, createOnly, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// A member joined or left: remember the previous ring (keys that moved are fetched from their old owner) and
    /// re-derive "owned by me" for every cached object, so eviction's non-owned-first order and the statistics follow
    /// today's ownership, not the one at insert time.
    /// </summary>
    private void OnRingChanged(object? sender, RingChangedEventArgs e)
    {
        _core.PreviousRing = e.Previous;
        _core.Unsettle($"the ring changed (joined: [{string.Join(", ", e.Added)}], left: [{string.Join(", ", e.Removed)}])");
        string self = _core.Owners.SelfId;
        lock (_core.Gate)
        {
            _core.Entries.Reown(entry => string.Equals(e.Current.IsEmpty ? self : e.Current.GetOwner(entry.Key), self, StringComparison.Ordinal));
        }
    }

    private void OnLeaseChanged(object? sender, LeaseChangedEventArgs e) =>
        _core.Unsettle(e.Held ? "it holds its membership lease again" : "it lost its membership lease (no heartbeat in time)");
}
