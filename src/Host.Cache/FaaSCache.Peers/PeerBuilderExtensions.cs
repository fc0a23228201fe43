using FaaSCache.Hosting;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Hosting;

namespace FaaSCache.Peers;

/// <summary>Where the peer service runs.</summary>
public enum PeerServerHosting
{
    /// <summary>On a Kestrel server of its own, started with the host (a WebJobs host has no web server to share).</summary>
    OwnServer,

    /// <summary>On the host's own web server: the host listens with <c>ListenForPeers</c> and maps <c>MapFaaSCachePeers</c>.</summary>
    HostServer,
}

/// <summary>Adds cachelet-to-cachelet transfers (§3.2) to a cachelet: the peer client and the peer service.</summary>
public static class PeerBuilderExtensions
{
    /// <summary>
    /// Registers the peer client (the cachelet asks owners through it) and the peer service (owners answer through it),
    /// both authenticated with the app's key, derived from the storage secret and the app name. Needs membership
    /// (<c>.AddMembership()</c>) for the members' endpoints.
    /// </summary>
    public static FaaSCacheBuilder AddPeers(this FaaSCacheBuilder builder, PeerServerHosting hosting = PeerServerHosting.OwnServer)
    {
        ArgumentNullException.ThrowIfNull(builder);
        IServiceCollection services = builder.Services;
        services.TryAddSingleton(sp => KeyOf(sp.GetRequiredService<IOptions<FaaSCacheInstanceOptions>>().Value));
        services.TryAddSingleton(sp =>
        {
            var client = new GrpcPeerClient(
                sp.GetRequiredService<IPeerDirectory>(),
                sp.GetRequiredService<PeerKey>(),
                new PeerClientOptions(),
                sp.GetService<ILogger<GrpcPeerClient>>(),
                sp.GetService<TimeProvider>());
            if (sp.GetService<IOwnerLocator>() is { } owners)
            {
                client.FollowMembership(owners);
            }

            return client;
        });
        services.TryAddSingleton<IPeerClient>(sp => sp.GetRequiredService<GrpcPeerClient>());
        services.TryAddSingleton<FaaSCache.ResultCaching.IResultPeers>(sp => sp.GetRequiredService<GrpcPeerClient>());
        if (hosting == PeerServerHosting.OwnServer)
        {
            services.TryAddEnumerable(ServiceDescriptor.Singleton<IHostedService, PeerServerHost>(sp =>
            {
                FaaSCacheInstanceOptions instance = sp.GetRequiredService<IOptions<FaaSCacheInstanceOptions>>().Value;
                return new PeerServerHost(
                    sp.GetRequiredService<IPeerServingCache>(),
                    sp.GetRequiredService<PeerKey>(),
                    new IPEndPoint(IPAddress.Parse(instance.PeerAddress), instance.PeerPort),
                    sp.GetService<ILoggerFactory>());
            }));
        }
        else
        {
            services.AddFaaSCachePeerService(key: null);
            services.AddOptions<PeerServerOptions>().Configure<PeerKey>((o, key) => o.Key ??= key);
        }

        return builder;
    }

    private static PeerKey KeyOf(FaaSCacheInstanceOptions instance) => PeerKey.FromConnectionString(instance.StorageConnection!, instance.AppName!);
}
