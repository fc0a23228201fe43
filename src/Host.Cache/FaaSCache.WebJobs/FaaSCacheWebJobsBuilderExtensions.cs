using FaaSCache.Hosting;
using FaaSCache.Memory;
using FaaSCache.Membership;
using FaaSCache.Options;
using FaaSCache.Peers;
using FaaSCache.Prewarm;
using FaaSCache.Scaling;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;

namespace FaaSCache.WebJobs;

/// <summary>Adds FaaSCache to a WebJobs / Functions host: the cachelet becomes the host's <see cref="IFunctionDataCache"/>.</summary>
public static class FaaSCacheWebJobsBuilderExtensions
{
    /// <summary>Configuration key of an explicit instance id (wins over <c>WEBSITE_INSTANCE_ID</c>).</summary>
    public const string InstanceIdSetting = FaaSCacheInstanceOptions.SectionName + ":InstanceId";

    /// <summary>
    /// Registers the FaaSCache extension through the same composition root as the FaaSCache host
    /// (<see cref="FaaSCacheServiceCollectionExtensions.AddFaaSCache(IServiceCollection, IConfiguration)"/>): options from
    /// the host's <c>extensions:faasCache</c> section, under the WebJobs root (<c>AzureWebJobs:extensions:faasCache</c>, or
    /// <c>AzureFunctionsJobHost:extensions:faasCache</c> in the Functions host); the instance from the <c>FaaSCache</c>
    /// section and the app settings. With <paramref name="peers"/> (the default) the instance joins its app's other
    /// instances (membership blob, a peer service on its own port) so that they form one cache, and the six consistency
    /// presets act across them. An invalid value stops start-up with a <see cref="FaaSCacheConfigurationException"/>
    /// naming the key. <paramref name="configure"/> runs after the section is read. Pieces registered before this call win.
    /// The scaling voters (compute, cache size, bandwidth) are added as WebJobs scale monitors, fed by a function filter
    /// that meters every invocation. With <c>prewarm.enabled</c> the Load Daemon pre-warms the cache at start and a
    /// snapshot is written at unload (§3.3).
    /// </summary>
    /// <param name="builder">The WebJobs builder.</param>
    /// <param name="configure">Optional changes to the options read from configuration (validated afterwards).</param>
    /// <param name="peers">Join the app's other instances as one cache (membership and peers).</param>
    /// <returns>The builder.</returns>
    public static IWebJobsBuilder AddFaaSCache(this IWebJobsBuilder builder, Action<FaaSCacheOptions>? configure = null, bool peers = true)
    {
        ArgumentNullException.ThrowIfNull(builder);
        builder.AddExtension<FaaSCacheExtensionConfigProvider>();
        IServiceCollection services = builder.Services;
        FaaSCacheBuilder cache = services.AddFaaSCache(
            sp => sp.GetRequiredService<IConfiguration>(),
            configuration => configuration.GetWebJobsExtensionConfigurationSection(FaaSCacheOptions.SectionName));
        if (configure is not null)
        {
            services.Configure(configure);
        }

        if (peers)
        {
            cache.AddMembership().AddPeers(PeerServerHosting.OwnServer);
        }

        // §4: the three voters join the composition root here as in the FaaSCache host; a WebJobs host with scale services
        // (ConfigureWebJobsScale / AddWebJobsScale) reports them through its own IScaleStatusProvider.
        cache.AddScaling();
        // §3.4: the Memory Daemon; a WebJobs host runs no workers of its own, so function memory is the host's.
        cache.AddMemoryDaemon();
        // §3.3: snapshot at unload, Load Daemon at start; it yields to the invocations the filter below meters.
        cache.AddPrewarm();
#pragma warning disable CS0618 // Function filters are marked preview in WebJobs 3; they are how an extension sees invocations.
        services.TryAddEnumerable(ServiceDescriptor.Singleton<Microsoft.Azure.WebJobs.Host.IFunctionFilter, InvocationMeterFilter>());
#pragma warning restore CS0618
        services.TryAddSingleton<IFunctionDataCache, FaaSCacheFunctionDataCache>();
        return builder;
    }
}
