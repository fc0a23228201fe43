using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.Hosting;

namespace FaaSCache.Peers;

/// <summary>
/// The peer service on a Kestrel server of its own, for hosts that have no web server to map it on (a WebJobs host).
/// The FaaSCache host maps the service on its own server instead (<see cref="PeerServiceCollectionExtensions.MapFaaSCachePeers"/>).
/// </summary>
public sealed class PeerServerHost(IPeerServingCache cache, PeerKey key, IPEndPoint endpoint, ILoggerFactory? loggers = null, Action<PeerServerOptions>? configure = null)
    : IHostedService, IAsyncDisposable
{
    private WebApplication? _app;

    /// <summary>Gets the endpoint the service listens on.</summary>
    public IPEndPoint Endpoint => endpoint;

    /// <inheritdoc />
    public async Task StartAsync(CancellationToken cancellationToken)
    {
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        if (loggers is not null)
        {
            builder.Services.AddSingleton(loggers);
        }

        builder.WebHost.ConfigureKestrel(k => k.ListenForPeers(endpoint));
        builder.Services.AddSingleton(cache);
        builder.Services.AddFaaSCachePeerService(key, configure);
        _app = builder.Build();
        _app.MapFaaSCachePeers();
        await _app.StartAsync(cancellationToken).ConfigureAwait(false);
    }

    /// <inheritdoc />
    public async Task StopAsync(CancellationToken cancellationToken)
    {
        if (_app is not null)
        {
            await _app.StopAsync(cancellationToken).ConfigureAwait(false);
        }
    }

    /// <inheritdoc />
    public async ValueTask DisposeAsync()
    {
        if (_app is not null)
        {
            await _app.DisposeAsync().ConfigureAwait(false);
            _app = null;
        }
    }
}
