namespace FaaSCache.Hosting;

/// <summary>
/// The one composition root of a cachelet. The FaaSCache host, the WebJobs face, the benchmarks and the tests all call
/// <see cref="AddFaaSCache(IServiceCollection, IConfiguration)"/>; every piece is registered with TryAdd, so a
/// registration made before the call (a test's in-memory store, say) wins.
/// </summary>
public static class FaaSCacheServiceCollectionExtensions
{
    /// <summary>
    /// Registers a cachelet whose app settings come from <paramref name="configuration"/>: host.json's
    /// <c>extensions:faasCache</c> section (<see cref="FaaSCacheOptions"/>) and the instance's <c>FaaSCache</c> section
    /// (<see cref="FaaSCacheInstanceOptions"/>), both validated when the host starts.
    /// </summary>
    public static FaaSCacheBuilder AddFaaSCache(this IServiceCollection services, IConfiguration configuration)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        return services.AddFaaSCache(_ => configuration, c => c.GetSection(FaaSCacheOptionsReader.SectionPath));
    }

    /// <summary>
    /// Registers a cachelet whose configuration is resolved from the container (a WebJobs host's), with the
    /// <c>faasCache</c> section found by <paramref name="cacheSection"/>.
    /// </summary>
    public static FaaSCacheBuilder AddFaaSCache(
        this IServiceCollection services,
        Func<IServiceProvider, IConfiguration> configuration,
        Func<IConfiguration, IConfigurationSection> cacheSection)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(configuration);
        ArgumentNullException.ThrowIfNull(cacheSection);

        services.AddOptions<FaaSCacheOptions>()
            .Configure<IServiceProvider>((o, sp) => FaaSCacheOptionsReader.ReadInto(cacheSection(configuration(sp)), o))
            .ValidateOnStart();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<FaaSCacheOptions>>(new StartupValidator<FaaSCacheOptions>(new FaaSCacheOptionsValidator())));
        services.AddOptions<FaaSCacheInstanceOptions>()
            .Configure<IServiceProvider>((o, sp) => configuration(sp).GetSection(FaaSCacheInstanceOptions.SectionName).Bind(o))
            .PostConfigure<IServiceProvider>((o, sp) => o.ApplyAppSettings(configuration(sp)))
            .ValidateOnStart();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<FaaSCacheInstanceOptions>>(
            new StartupValidator<FaaSCacheInstanceOptions>(new FaaSCacheInstanceOptionsValidator())));

        services.TryAddSingleton(TimeProvider.System);
        services.TryAddSingleton(sp => sp.GetRequiredService<IOptions<FaaSCacheOptions>>().Value);
        services.TryAddSingleton(sp =>
        {
            FaaSCacheInstanceOptions instance = sp.GetRequiredService<IOptions<FaaSCacheInstanceOptions>>().Value;
            return new SharedMemoryStore(
                instance.InstanceId!,
                instance.SharedMemoryDirectories.Count > 0 ? [.. instance.SharedMemoryDirectories] : null,
                sp.GetService<ILogger<SharedMemoryStore>>());
        });
        services.TryAddSingleton<IBlobStore>(sp => CreateBlobStore(sp.GetRequiredService<IOptions<FaaSCacheInstanceOptions>>().Value));
        services.TryAddSingleton(sp => RingOwnerLocator.SingleInstance(
            sp.GetRequiredService<IOptions<FaaSCacheInstanceOptions>>().Value.InstanceId!,
            sp.GetRequiredService<FaaSCacheOptions>().Membership.VirtualNodes));
        services.TryAddSingleton<IOwnerLocator>(sp => sp.GetRequiredService<RingOwnerLocator>());
        services.TryAddSingleton(sp => new Cachelet(
            sp.GetRequiredService<FaaSCacheOptions>(),
            sp.GetRequiredService<IBlobStore>(),
            sp.GetRequiredService<SharedMemoryStore>(),
            sp.GetRequiredService<IOwnerLocator>(),
            sp.GetRequiredService<TimeProvider>(),
            sp.GetService<ILogger<Cachelet>>(),
            ownsSharedMemory: false, // the container owns the store, which users may replace or share
            peers: sp.GetService<IPeerClient>(),
            bandwidth: sp.GetService<Bandwidth.BandwidthScaler>()));
        services.TryAddSingleton(sp => new ResultCaching.LocalResultStore(sp.GetRequiredService<FaaSCacheOptions>().Results.CapacityBytes, sp.GetRequiredService<TimeProvider>()));
        services.TryAddSingleton<IObjectCache>(sp => sp.GetRequiredService<Cachelet>());
        services.TryAddSingleton<IPeerServingCache>(sp => sp.GetRequiredService<Cachelet>());
        services.TryAddSingleton<IVersionedCache>(sp => sp.GetRequiredService<Cachelet>());
        services.TryAddSingleton<ICacheAdmin>(sp => sp.GetRequiredService<Cachelet>());
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IHostedService, FaaSCacheLifetime>());
        return new FaaSCacheBuilder(services, configuration);
    }

    private static AzureBlobStore CreateBlobStore(FaaSCacheInstanceOptions instance)
    {
        try
        {
            return AzureBlobStore.FromConnectionString(instance.StorageConnection!);
        }
        catch (Exception e) when (e is FormatException or ArgumentException or InvalidOperationException)
        {
            // The value holds the account key: name the setting, never echo it.
            throw new FaaSCacheConfigurationException(
                $"The storage connection string in '{FaaSCacheInstanceOptions.StorageSetting}' is not valid: {e.GetType().Name}.", e);
        }
    }
}
