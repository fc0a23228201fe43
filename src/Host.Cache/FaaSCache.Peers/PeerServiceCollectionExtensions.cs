using Grpc.AspNetCore.Server;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Routing;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection.Extensions;

namespace FaaSCache.Peers;

/// <summary>
/// The peer service's pieces for a web server: <c>builder.AddPeers(...)</c> (<see cref="PeerBuilderExtensions"/>) wires
/// them into a cachelet; a host that serves peers on its own server (<see cref="PeerServerHosting.HostServer"/>) then
/// listens with <see cref="ListenForPeers"/> and maps <see cref="MapFaaSCachePeers"/> (<c>.RequireHost("*:&lt;peerPort&gt;")</c>
/// to serve it on the peer port only). Each member advertises <c>http://&lt;its address&gt;:&lt;peerPort&gt;/</c> as its
/// peer endpoint in the membership list.
/// </summary>
public static class PeerServiceCollectionExtensions
{
    /// <summary>
    /// Registers the server side: gRPC, <see cref="CacheletPeerService"/> (it resolves the <c>Cachelet</c> from DI, so
    /// register that too) and, for that service only, <see cref="PeerAuthInterceptor"/> and messages up to
    /// <see cref="PeerWire.MaxMessageSize"/>. Other gRPC services of the host (FunctionRpc) are not affected.
    /// </summary>
    /// <param name="services">The services.</param>
    /// <param name="key">The app's peer key; null when another registration configures it.</param>
    /// <param name="configure">Changes to the defaults (chunk size, clock skew).</param>
    /// <returns>The gRPC server builder, to configure more.</returns>
    public static IGrpcServerBuilder AddFaaSCachePeerService(this IServiceCollection services, PeerKey? key, Action<PeerServerOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        services.AddOptions<PeerServerOptions>().Configure(o =>
        {
            o.Key ??= key;
            configure?.Invoke(o);
        });
        services.TryAddSingleton(sp => new PeerBulkServer(
            sp.GetRequiredService<IOptions<PeerServerOptions>>(),
            sp.GetService<TimeProvider>(),
            sp.GetService<ILogger<PeerBulkServer>>(),
            sp.GetService<IPeerServingCache>()));
        services.TryAddSingleton(sp => new PeerAuthInterceptor(
            sp.GetRequiredService<IOptions<PeerServerOptions>>(),
            sp.GetService<TimeProvider>(),
            sp.GetService<ILogger<PeerAuthInterceptor>>()));
        return services.AddGrpc().AddServiceOptions<CacheletPeerService>(o =>
        {
            o.Interceptors.Add<PeerAuthInterceptor>();
            o.MaxReceiveMessageSize = PeerWire.MaxMessageSize;
            o.MaxSendMessageSize = PeerWire.MaxMessageSize;
        });
    }

    /// <summary>Maps <see cref="CacheletPeerService"/>; chain <c>.RequireHost("*:&lt;peerPort&gt;")</c> to serve it on the peer port only.</summary>
    /// <param name="endpoints">The endpoint route builder (the web application).</param>
    /// <returns>The convention builder.</returns>
    public static GrpcServiceEndpointConventionBuilder MapFaaSCachePeers(this IEndpointRouteBuilder endpoints)
    {
        ArgumentNullException.ThrowIfNull(endpoints);
        return endpoints.MapGrpcService<CacheletPeerService>();
    }

    /// <summary>
    /// Listens for peers on <paramref name="endpoint"/> with HTTP/2 cleartext (prior knowledge, what gRPC clients send on
    /// <c>http://</c>), and raises Kestrel's HTTP/2 receive windows so a streamed put is not throttled by the
    /// 768 KiB default (these limits are server-wide).
    /// </summary>
    /// <param name="kestrel">Kestrel's options.</param>
    /// <param name="endpoint">Address and port of the peer service.</param>
    /// <param name="configure">More configuration of the endpoint.</param>
    public static void ListenForPeers(this KestrelServerOptions kestrel, IPEndPoint endpoint, Action<ListenOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(kestrel);
        ArgumentNullException.ThrowIfNull(endpoint);
        kestrel.Limits.Http2.InitialConnectionWindowSize = Math.Max(kestrel.Limits.Http2.InitialConnectionWindowSize, 16 << 20);
        kestrel.Limits.Http2.InitialStreamWindowSize = Math.Max(kestrel.Limits.Http2.InitialStreamWindowSize, 8 << 20);
        kestrel.Listen(endpoint, listen =>
        {
            listen.Protocols = HttpProtocols.Http2;
            configure?.Invoke(listen);
        });
    }
}
