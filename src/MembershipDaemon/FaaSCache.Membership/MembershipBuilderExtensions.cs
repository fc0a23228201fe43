using Azure.Storage.Blobs;
using FaaSCache.Cluster;
using FaaSCache.Hosting;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Options;

namespace FaaSCache.Membership;

/// <summary>Adds the membership daemon to a cachelet (§3.2): several instances of one app become one cache.</summary>
public static class MembershipBuilderExtensions
{
    /// <summary>
    /// Registers the <see cref="MembershipDaemon"/> over the app's membership blob, keeping the cachelet's owner ring
    /// in step, as the <see cref="IPeerDirectory"/> the peer client looks members up in. It joins once the host has
    /// started (so the peer service listens) and leaves as soon as the host begins to stop. The settings are host.json's
    /// <c>membership</c> section and the instance's <c>FaaSCache:AppName</c>, <c>FaaSCache:InstanceId</c> and peer endpoint.
    /// </summary>
    public static FaaSCacheBuilder AddMembership(this FaaSCacheBuilder builder)
    {
        ArgumentNullException.ThrowIfNull(builder);
        IServiceCollection services = builder.Services;
        services.Configure<FaaSCacheInstanceOptions>(o => o.Membership = true);
        services.TryAddSingleton(sp =>
        {
            FaaSCacheInstanceOptions instance = sp.GetRequiredService<IOptions<FaaSCacheInstanceOptions>>().Value;
            MembershipOptions membership = sp.GetRequiredService<IOptions<FaaSCacheOptions>>().Value.Membership;
            // One attempt per heartbeat, bounded by the failure timeout: the loop retries, so storage back is a lease back.
            BlobClientOptions client = MembershipStore.CreateDaemonClientOptions(membership.FailureTimeout);
            return new MembershipDaemon(
                MembershipStore.Create(instance.StorageConnection!, instance.AppName!, clientOptions: client),
                new MemberIdentity(instance.AppName!, instance.InstanceId!, instance.PeerEndpoint),
                membership,
                sp.GetRequiredService<RingOwnerLocator>(),
                sp.GetService<TimeProvider>(),
                sp.GetService<ILogger<MembershipDaemon>>());
        });
        services.TryAddSingleton<IPeerDirectory>(sp => sp.GetRequiredService<MembershipDaemon>());
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IHostedService, MembershipLifetime>());
        return builder;
    }
}
