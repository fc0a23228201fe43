namespace FaaSCache.Options;

/// <summary>The six read/write presets of the paper's Table 3.</summary>
public enum ConsistencyPreset
{
    /// <summary>Write owner then storage (sync); read checks the version in storage.</summary>
    Strong,
    /// <summary>Write owner (sync); read from the owner.</summary>
    Owner,
    /// <summary>Write owner (async persistence); read from the owner.</summary>
    OwnerAsync,
    /// <summary>Write owner (sync); read any local copy.</summary>
    OwnerLocalRead,
    /// <summary>Write local (sync); read local.</summary>
    Local,
    /// <summary>Write local (async persistence); read local.</summary>
    LocalAsync,
}

/// <summary>How writes reach blob storage.</summary>
public enum PersistMode
{
    /// <summary>The write returns after storage has it.</summary>
    Sync,
    /// <summary>The write returns after the cache has it; an ordered background queue persists it.</summary>
    Async,
    /// <summary>Writes never reach storage.</summary>
    None,
}

/// <summary>Eviction policies of §3.4.</summary>
public enum EvictionPolicy
{
    /// <summary>Least recently used, objects this cachelet does not own first.</summary>
    Lru,
    /// <summary>Non-owned large, non-owned small, owned large, then LRU.</summary>
    Size,
}

/// <summary>The <c>extensions.faasCache</c> section of host.json.</summary>
public sealed class FaaSCacheOptions
{
    /// <summary>The configuration section name under <c>extensions</c>.</summary>
    public const string SectionName = "faasCache";
    /// <summary>Default <see cref="MemoryHeadroomPercent"/>.</summary>
    public const int DEFAULT_MEMORY_HEADROOM_PERCENT = 10;

    /// <summary>Gets or sets the consistency preset; <c>strong</c> by default.</summary>
    public ConsistencyPreset Consistency { get; set; } = ConsistencyPreset.Strong;

    /// <summary>Gets or sets the persistence mode; null means the preset's own (async for *Async presets, else sync).</summary>
    public PersistMode? Persist { get; set; }

    /// <summary>Gets the eviction settings.</summary>
    public EvictionOptions Eviction { get; set; } = new();

    /// <summary>
    /// Gets or sets how close (in percent of the memory limit) function memory plus cached bytes may come before the
    /// Memory Daemon evicts (§3.4).
    /// </summary>
    public int MemoryHeadroomPercent { get; set; } = DEFAULT_MEMORY_HEADROOM_PERCENT;

    /// <summary>
    /// Gets or sets the app's memory limit the Memory Daemon watches; null reads the host's cgroup v2 <c>memory.max</c>,
    /// else the machine's MemTotal.
    /// </summary>
    public long? MemoryLimitBytes { get; set; }

    /// <summary>Gets or sets the cache capacity in bytes; null derives it from the memory available to the process.</summary>
    public long? CapacityBytes { get; set; }

    /// <summary>Gets or sets glob patterns of keys (<c>container/blob</c>) that are never cached.</summary>
    public IList<string> DoNotCache { get; set; } = [];

    /// <summary>
    /// Gets or sets a value indicating whether the host serves the Blob REST API on a loopback port and points its
    /// workers' connection strings at it, so that storage SDK calls and SDK-type bindings go through the cache.
    /// </summary>
    public bool SdkEndpoint { get; set; } = true;

    /// <summary>Gets the pre-warm settings (§3.3; the Load Daemon and the unload snapshot act on them when <c>AddPrewarm</c> is composed).</summary>
    public PrewarmOptions Prewarm { get; set; } = new();

    /// <summary>Gets the scaling settings (§4; the voters and the scaled loads act on them when <c>AddScaling</c> is composed).</summary>
    public ScalingOptions Scaling { get; set; } = new();

    /// <summary>Gets the membership settings.</summary>
    public MembershipOptions Membership { get; set; } = new();

    /// <summary>Gets the result caching settings (Rosa et al.; the host acts on them).</summary>
    public ResultCacheOptions Results { get; set; } = new();

    /// <summary>Gets what the consistency preset means (Table 3): read and write targets, default persistence, invalidation.</summary>
    public ConsistencyPolicy Policy => ConsistencyPolicy.For(Consistency);

    /// <summary>The persistence mode in force: the explicit one, or the preset's.</summary>
    public PersistMode EffectivePersist => Persist ?? Policy.DefaultPersist;

    /// <summary>The capacity in force.</summary>
    public long EffectiveCapacityBytes => CapacityBytes ?? DefaultCapacity();

    private static long DefaultCapacity()
    {
        // A quarter of what the process may use leaves room for the functions themselves (§3.4).
        long available = GC.GetGCMemoryInfo().TotalAvailableMemoryBytes;
        return Math.Max(64L << 20, available / 4);
    }
}

/// <summary>Eviction settings.</summary>
public sealed class EvictionOptions
{
    /// <summary>Default size threshold of the size policy: 12 KB (80% of production blobs are smaller).</summary>
    public const long DEFAULT_SIZE_THRESHOLD_BYTES = 12 * 1024;

    /// <summary>Gets or sets the policy.</summary>
    public EvictionPolicy Policy { get; set; } = EvictionPolicy.Lru;

    /// <summary>Gets or sets the large/small threshold of the size policy.</summary>
    public long SizeThresholdBytes { get; set; } = DEFAULT_SIZE_THRESHOLD_BYTES;

    /// <summary>Gets or sets an optional time-to-live measured from when the object was cached.</summary>
    public TimeSpan? Ttl { get; set; }
}

/// <summary>Pre-warm settings (§3.3).</summary>
public sealed class PrewarmOptions
{
    /// <summary>Gets or sets a value indicating whether an unload writes a snapshot and the Load Daemon pre-warms at load.</summary>
    public bool Enabled { get; set; } = true;

    /// <summary>Gets or sets the hit-rate threshold (0..1) above which an object is reloaded (objects accessed more than once are, too).</summary>
    public double HitRateThreshold { get; set; } = 0.5;
}

/// <summary>Scaling votes (§4): which voters run, and the targets they vote against.</summary>
public sealed class ScalingOptions
{
    /// <summary>Default in-flight invocations per instance the compute voter aims for.</summary>
    public const int DEFAULT_TARGET_CONCURRENCY = 8;

    /// <summary>Default access rate (reads and writes per second, own and peers') below which the cache-size voter votes in.</summary>
    public const double DEFAULT_LOW_ACCESS_RATE = 0.1;

    /// <summary>Gets or sets a value indicating whether the compute voter is on.</summary>
    public bool Compute { get; set; } = true;

    /// <summary>Gets or sets a value indicating whether the cache-size voter is on.</summary>
    public bool CacheSize { get; set; } = true;

    /// <summary>Gets or sets a value indicating whether bandwidth scaling is on: its voter and the scaled loads of large misses.</summary>
    public bool Bandwidth { get; set; } = true;

    /// <summary>Gets or sets the concurrency (in-flight invocations, or rate x latency) per instance the compute voter aims for.</summary>
    public int TargetConcurrency { get; set; } = DEFAULT_TARGET_CONCURRENCY;

    /// <summary>Gets or sets a mean latency above which a busy instance votes out; null: latency does not vote.</summary>
    public TimeSpan? TargetLatency { get; set; }

    /// <summary>Gets or sets the access rate (per second) below which the cache-size voter votes in.</summary>
    public double LowAccessRate { get; set; } = DEFAULT_LOW_ACCESS_RATE;

    /// <summary>Gets or sets how often the transfer profile (BW_BS, BW_Inst) is probed when no transfer measured it lately.</summary>
    public TimeSpan ProfileInterval { get; set; } = TimeSpan.FromMinutes(5);
}

/// <summary>Membership settings.</summary>
public sealed class MembershipOptions
{
    /// <summary>Default virtual nodes per cachelet (the paper's choice).</summary>
    public const int DEFAULT_VIRTUAL_NODES = 100;

    /// <summary>Gets or sets the heartbeat interval.</summary>
    public TimeSpan HeartbeatInterval { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>Gets or sets how old a heartbeat may be before the member is removed.</summary>
    public TimeSpan FailureTimeout { get; set; } = TimeSpan.FromSeconds(15);

    /// <summary>Gets or sets the virtual nodes per member on the ring.</summary>
    public int VirtualNodes { get; set; } = DEFAULT_VIRTUAL_NODES;

    /// <summary>
    /// Gets or sets how often, between heartbeats, a member asks whether the list changed (one conditional GET, a 304
    /// when nothing did); zero turns it off (changes are seen at the next heartbeat).
    /// </summary>
    public TimeSpan WatchInterval { get; set; } = TimeSpan.FromSeconds(1);
}
