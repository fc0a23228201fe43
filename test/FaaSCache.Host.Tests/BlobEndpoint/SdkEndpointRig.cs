using System.Collections.Concurrent;
using Azure.Core;
using Azure.Core.Pipeline;
using Azure.Storage.Blobs;
using FaaSCache.Caching;
using FaaSCache.Hosting;
using FaaSCache.Host.BlobEndpoint;
using FaaSCache.Options;
using FaaSCache.Storage;
using FaaSCache.Testing;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace FaaSCache.Host.Tests.BlobEndpoint;

/// <summary>
/// The SDK endpoint over a real cachelet and the collection's real Azurite, served by Kestrel on a free loopback port
/// and composed as the host composes it (<see cref="BlobEndpointHosting"/>); SDK clients reach it over real HTTP.
/// </summary>
internal sealed class SdkEndpointRig : IAsyncDisposable
{
    private readonly WebApplication _web;
    private readonly TempShmDirectory _shm;

    private SdkEndpointRig(WebApplication web, TempShmDirectory shm, Cachelet cachelet, AzuriteFixture azurite, SdkEndpointAddress address)
    {
        _web = web;
        _shm = shm;
        Cachelet = cachelet;
        Azurite = azurite;
        Address = address;
    }

    public Cachelet Cachelet { get; }

    public AzuriteFixture Azurite { get; }

    public SdkEndpointAddress Address { get; }

    /// <summary>Gets how each endpoint read was served (the <c>x-faascache-read</c> header), in order.</summary>
    public ConcurrentQueue<string> ReadSources { get; } = new();

    /// <summary>Gets the connection string a worker gets: Azurite's, with the blob endpoint at the rig.</summary>
    public string EndpointConnectionString => $"DefaultEndpointsProtocol=http;AccountName={AzuriteServer.AccountName};AccountKey={AzuriteServer.AccountKey};BlobEndpoint={Address.BlobEndpoint}";

    public static async Task<SdkEndpointRig> StartAsync(AzuriteFixture azurite, Action<FaaSCacheOptions>? configure = null)
    {
        var shm = new TempShmDirectory();
        Cachelet? cachelet = null;
        try
        {
            cachelet = new CacheletBuilder("sdk-" + Guid.NewGuid().ToString("N")[..8], [shm.Path])
                .WithStorage(AzureBlobStore.FromConnectionString(azurite.ConnectionString))
                .Configure(o => configure?.Invoke(o))
                .Build();
            var address = new SdkEndpointAddress(FreePorts.Get(), AzuriteServer.AccountName);
            WebApplicationBuilder builder = WebApplication.CreateSlimBuilder();
            builder.Logging.ClearProviders();
            builder.WebHost.ConfigureKestrel(k =>
            {
                k.Limits.MaxRequestBodySize = null;
                BlobEndpointHosting.Listen(k, address);
            });
            builder.Services.AddSingleton<IObjectCache>(cachelet);
            builder.Services.AddSingleton<ICacheAdmin>(cachelet);
            builder.Services.AddSingleton<IBlobStore>(cachelet.Storage);
            builder.Services.AddSingleton(Microsoft.Extensions.Options.Options.Create(cachelet.Options));
            builder.Services.AddSdkEndpoint(address, azurite.ConnectionString);
            WebApplication web = builder.Build();
            web.MapSdkEndpoint(address);
            await web.StartAsync();
            return new SdkEndpointRig(web, shm, cachelet, azurite, address);
        }
        catch
        {
            if (cachelet is not null)
            {
                await cachelet.DisposeAsync();
            }

            shm.Dispose();
            throw;
        }
    }

    /// <summary>A client through the endpoint, as a function builds one from its app setting.</summary>
    public BlobServiceClient ViaEndpoint(Action<BlobClientOptions>? configure = null)
    {
        var options = new BlobClientOptions(BlobClientOptions.ServiceVersion.V2025_11_05);
        options.Retry.MaxRetries = 0;
        options.AddPolicy(new ReadSourcePolicy(ReadSources), HttpPipelinePosition.PerRetry);
        configure?.Invoke(options);
        return new BlobServiceClient(EndpointConnectionString, options);
    }

    /// <summary>A client straight to Azurite.</summary>
    public BlobServiceClient Direct() => Azurite.CreateServiceClient();

    public async ValueTask DisposeAsync()
    {
        await _web.StopAsync();
        await _web.DisposeAsync();
        await Cachelet.DisposeAsync();
        _shm.Dispose();
    }

    private sealed class ReadSourcePolicy(ConcurrentQueue<string> sources) : HttpPipelineSynchronousPolicy
    {
        public override void OnReceivedResponse(HttpMessage message)
        {
            if (message.Response.Headers.TryGetValue(BlobEndpointHandler.ReadSourceHeader, out string? source))
            {
                sources.Enqueue(source);
            }
        }
    }
}
