using System.Net;
using FaaSCache.Ownership;
using Grpc.AspNetCore.Server;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Routing;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace FaaSCache.Peers;

/// <summary>
/// Wiring of the peer service and client into a host. A host that runs a cachelet with peers does, in order:
/// <code>
/// PeerKey key = PeerKey.FromConnectionString(storageConnectionString, appName);
/// builder.WebHost.ConfigureKestrel(k => k.ListenForPeers(new IPEndPoint(IPAddress.Any, peerPort)));
/// builder.Services.AddSingleton&lt;IPeerDirectory&gt;(membership);       // endpoints of the live members
/// builder.Services.AddFaaSCachePeers(key);                           // service + client
/// builder.Services.AddSingleton(sp =&gt; new Cachelet(options, storage, shm, ring, peers: sp.GetRequiredService&lt;IPeerClient&gt;()));
/// ...
/// app.MapFaaSCachePeers().RequireHost($"*:{peerPort}");              // only on the peer port
/// </code>
/// Each member advertises <c>http://&lt;its address&gt;:&lt;peerPort&gt;/</c> as its peer endpoint in the membership list.
/// </summary>
public static class PeerServiceCollectionExtensions
{
    /// <summary>
    /// Registers the server side: gRPC, <see cref="CacheletPeerService"/> (it resolves the <c>Cachelet</c> from DI, so
    /// register that too) and, for that service only, <see cref="PeerAuthInterceptor"/> and messages up to
    /// <see cref="PeerWire.MaxMessageSize"/>. Other gRPC services of the host (FunctionRpc) are not affected.
    /// </summary>
    /// <param name="services">The services.</param>
    /// <param name="key">The app's peer key.</param>
    /// <param name="configure">Changes to the defaults (chunk size, clock skew).</param>
    /// <returns>The gRPC server builder, to configure more.</returns>
    public static IGrpcServerBuilder AddFaaSCachePeerService(this IServiceCollection services, PeerKey key, Action<PeerServerOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(key);
        services.AddOptions<PeerServerOptions>().Configure(o =>
        {
            o.Key = key;
            configure?.Invoke(o);
        });
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

    /// <summary>
    /// Registers the client side: a singleton <see cref="GrpcPeerClient"/> as <see cref="IPeerClient"/>, over the
    /// <see cref="IPeerDirectory"/> registered in DI (the membership daemon's).
    /// </summary>
    /// <param name="services">The services.</param>
    /// <param name="key">The app's peer key.</param>
    /// <param name="configure">Changes to the client defaults (timeouts, put chunk size).</param>
    /// <returns>The services.</returns>
    public static IServiceCollection AddFaaSCachePeerClient(this IServiceCollection services, PeerKey key, Action<PeerClientOptions>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(key);
        services.TryAddSingleton(sp =>
        {
            var options = new PeerClientOptions();
            configure?.Invoke(options);
            return new GrpcPeerClient(
                sp.GetRequiredService<IPeerDirectory>(),
                key,
                options,
                sp.GetService<ILogger<GrpcPeerClient>>(),
                sp.GetService<TimeProvider>());
        });
        services.TryAddSingleton<IPeerClient>(sp => sp.GetRequiredService<GrpcPeerClient>());
        return services;
    }

    /// <summary>Registers both sides (<see cref="AddFaaSCachePeerService"/> and <see cref="AddFaaSCachePeerClient"/>) with one key.</summary>
    /// <param name="services">The services.</param>
    /// <param name="key">The app's peer key.</param>
    /// <param name="configureServer">Changes to the server defaults.</param>
    /// <param name="configureClient">Changes to the client defaults.</param>
    /// <returns>The services.</returns>
    public static IServiceCollection AddFaaSCachePeers(this IServiceCollection services, PeerKey key, Action<PeerServerOptions>? configureServer = null, Action<PeerClientOptions>? configureClient = null)
    {
        services.AddFaaSCachePeerService(key, configureServer);
        return services.AddFaaSCachePeerClient(key, configureClient);
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
