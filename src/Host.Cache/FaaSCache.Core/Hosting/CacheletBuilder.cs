namespace FaaSCache.Hosting;

/// <summary>
/// One cachelet outside a host (tests, benchmarks, the demo, a user's own tests), composed by the same
/// <see cref="FaaSCacheServiceCollectionExtensions.AddFaaSCache(IServiceCollection, IConfiguration)"/> a host calls: what
/// the builder is given (options, a store such as an in-memory or fault-injecting one, an owner locator, peers, a fake
/// clock) is registered first and wins over the defaults. Disposing the built cachelet disposes its container, so its
/// shared-memory store and maps go with it.
/// </summary>
/// <example>
/// <code>
/// await using Cachelet cachelet = new CacheletBuilder("i1", [shmRoot])
///     .Configure(o => o.CapacityBytes = 64L &lt;&lt; 20)
///     .WithStorage(AzureBlobStore.FromConnectionString("UseDevelopmentStorage=true"))
///     .Build();
/// </code>
/// </example>
public sealed class CacheletBuilder
{
    private readonly ServiceCollection _services = new();
    private readonly string _instanceId;
    private readonly IReadOnlyList<string> _sharedMemoryRoots;
    private FaaSCacheOptions _options = new();
    private bool _built;

    /// <summary>Initializes a new instance of the <see cref="CacheletBuilder"/> class.</summary>
    /// <param name="instanceId">The instance id (names its maps and its place on the ring).</param>
    /// <param name="sharedMemoryRoots">Where its maps go (each a folder; maps land in &lt;root&gt;/AzureFunctions).</param>
    public CacheletBuilder(string instanceId, IReadOnlyList<string> sharedMemoryRoots)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(instanceId);
        ArgumentNullException.ThrowIfNull(sharedMemoryRoots);
        _instanceId = instanceId;
        _sharedMemoryRoots = sharedMemoryRoots;
    }

    /// <summary>Uses <paramref name="options"/> (host.json's <c>faasCache</c> section, as read).</summary>
    public CacheletBuilder WithOptions(FaaSCacheOptions options)
    {
        _options = options ?? throw new ArgumentNullException(nameof(options));
        return this;
    }

    /// <summary>Changes the options (defaults, or those given to <see cref="WithOptions"/>).</summary>
    public CacheletBuilder Configure(Action<FaaSCacheOptions> configure)
    {
        ArgumentNullException.ThrowIfNull(configure);
        configure(_options);
        return this;
    }

    /// <summary>Reads and writes blobs through <paramref name="storage"/> (an in-memory store, a fault-injecting wrapper, Azurite).</summary>
    public CacheletBuilder WithStorage(IBlobStore storage) => Add(storage);

    /// <summary>Finds owners with <paramref name="owners"/> (a ring over several members); default: this instance owns every key.</summary>
    public CacheletBuilder WithOwners(IOwnerLocator owners) => Add(owners);

    /// <summary>Reaches the other cachelets through <paramref name="peers"/>.</summary>
    public CacheletBuilder WithPeers(IPeerClient peers) => Add(peers);

    /// <summary>Uses <paramref name="time"/> (a fake clock in tests).</summary>
    public CacheletBuilder WithTime(TimeProvider time) => Add(time);

    /// <summary>Scales large misses out with <paramref name="bandwidth"/> (§4).</summary>
    public CacheletBuilder WithBandwidth(Bandwidth.BandwidthScaler bandwidth) => Add(bandwidth);

    /// <summary>Logs through <paramref name="loggerFactory"/>.</summary>
    public CacheletBuilder WithLogging(ILoggerFactory loggerFactory)
    {
        ArgumentNullException.ThrowIfNull(loggerFactory);
        _services.AddSingleton(loggerFactory);
        _services.TryAdd(ServiceDescriptor.Singleton(typeof(ILogger<>), typeof(Logger<>)));
        return this;
    }

    /// <summary>
    /// Composes the cachelet with <see cref="FaaSCacheServiceCollectionExtensions.AddFaaSCache(IServiceCollection, IConfiguration)"/>
    /// and returns it; options are validated here (a <see cref="FaaSCacheConfigurationException"/> names what is wrong).
    /// </summary>
    public Cachelet Build()
    {
        if (_built)
        {
            throw new InvalidOperationException("This CacheletBuilder has already built its cachelet: make a new builder for another one.");
        }

        _built = true;
        FaaSCacheOptions options = _options;
        string instanceId = _instanceId;
        string[] roots = [.. _sharedMemoryRoots];
        _services.AddSingleton(options);
        _services.TryAddSingleton(sp => new SharedMemoryStore(instanceId, roots.Length > 0 ? roots : null, sp.GetService<ILogger<SharedMemoryStore>>()));
        _services.TryAddSingleton<IOwnerLocator>(_ => RingOwnerLocator.SingleInstance(instanceId, options.Membership.VirtualNodes));
        _services.AddFaaSCache(new ConfigurationBuilder().Build());

        ServiceProvider provider = _services.BuildServiceProvider();
        try
        {
            Cachelet cachelet = provider.GetRequiredService<Cachelet>();
            cachelet.DisposeWith(provider);
            return cachelet;
        }
        catch
        {
            provider.Dispose();
            throw;
        }
    }

    private CacheletBuilder Add<T>(T instance)
        where T : class
    {
        ArgumentNullException.ThrowIfNull(instance);
        _services.AddSingleton(instance);
        return this;
    }
}
