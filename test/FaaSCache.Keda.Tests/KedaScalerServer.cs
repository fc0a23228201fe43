using FaaSCache.Keda;
using Grpc.Net.Client;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace FaaSCache.Keda.Tests;

/// <summary>
/// The KEDA face served for real: a Kestrel WebApplication on a loopback port the OS picks (plain HTTP/2, as KEDA
/// dials a scalerAddress without TLS), composed as the controller composes it (AddFaaSCacheKeda + MapFaaSCacheKeda).
/// </summary>
internal sealed class KedaScalerServer : IAsyncDisposable
{
    private readonly WebApplication _app;
    private readonly GrpcChannel _channel;

    private KedaScalerServer(WebApplication app, Uri address)
    {
        _app = app;
        Address = address;
        _channel = GrpcChannel.ForAddress(address);
        Client = new ExternalScaler.ExternalScaler.ExternalScalerClient(_channel);
    }

    /// <summary>Gets the address KEDA would have as scalerAddress.</summary>
    public Uri Address { get; }

    /// <summary>Gets a client generated from the same proto KEDA's is.</summary>
    public ExternalScaler.ExternalScaler.ExternalScalerClient Client { get; }

    /// <summary>Starts the service over <paramref name="apps"/>; port 0 so that no port is guessed.</summary>
    public static async Task<KedaScalerServer> StartAsync(params IScaleDecisions[] apps)
    {
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.ConfigureKestrel(k => k.Listen(System.Net.IPAddress.Loopback, 0, l => l.Protocols = HttpProtocols.Http2));
        foreach (IScaleDecisions app in apps)
        {
            builder.Services.AddSingleton(app);
        }

        builder.Services.AddFaaSCacheKeda();
        WebApplication web = builder.Build();
        web.MapFaaSCacheKeda();
        await web.StartAsync();
        string bound = web.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.Single();
        return new KedaScalerServer(web, new Uri(bound));
    }

    /// <summary>Stops the server and closes the channel, even after a failed test.</summary>
    public async ValueTask DisposeAsync()
    {
        _channel.Dispose();
        await _app.StopAsync();
        await _app.DisposeAsync();
    }
}
