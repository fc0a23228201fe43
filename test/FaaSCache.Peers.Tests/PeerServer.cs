using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.Logging;

namespace FaaSCache.Peers.Tests;

/// <summary>A real Kestrel server on a free 127.0.0.1 port serving one cachelet's peer service (HTTP/2 cleartext).</summary>
internal sealed class PeerServer : IAsyncDisposable
{
    private readonly WebApplication _app;
    private int _stopped;

    private PeerServer(WebApplication app, int port)
    {
        _app = app;
        Port = port;
        Endpoint = new Uri($"http://127.0.0.1:{port}/");
    }

    public int Port { get; }

    public Uri Endpoint { get; }

    /// <summary>Gets the server's services (its bulk listener, for instance).</summary>
    public IServiceProvider Services => _app.Services;

    public static async Task<PeerServer> StartAsync(Cachelet cachelet, PeerKey key, Action<IServiceCollection>? configureServices = null, Action<PeerServerOptions>? configure = null)
    {
        for (int attempt = 0; ; attempt++)
        {
            int port = FreePorts.Get();
            WebApplication app = Build(cachelet, key, port, configureServices, configure);
            try
            {
                await app.StartAsync();
                return new PeerServer(app, port);
            }
            catch (IOException) when (attempt < 5)
            {
                // Someone took the port between FreePorts.Get and the bind: try another.
                await app.DisposeAsync();
            }
        }
    }

    /// <summary>Stops at once: open calls are aborted, as when the instance goes away.</summary>
    public async Task StopAsync()
    {
        if (Interlocked.Exchange(ref _stopped, 1) == 0)
        {
            await _app.StopAsync(new CancellationToken(canceled: true));
        }
    }

    public async ValueTask DisposeAsync()
    {
        await StopAsync();
        await _app.DisposeAsync();
    }

    internal static WebApplication Build(Cachelet cachelet, PeerKey key, int port, Action<IServiceCollection>? configureServices, Action<PeerServerOptions>? configure, bool quiet = true)
    {
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder();
        if (quiet)
        {
            builder.Logging.ClearProviders();
        }

        builder.WebHost.ConfigureKestrel(k => k.ListenForPeers(new IPEndPoint(IPAddress.Loopback, port)));
        builder.Services.AddSingleton<IPeerServingCache>(cachelet);
        builder.Services.AddFaaSCachePeerService(key, configure);
        configureServices?.Invoke(builder.Services);
        WebApplication app = builder.Build();
        app.MapFaaSCachePeers();
        return app;
    }
}
