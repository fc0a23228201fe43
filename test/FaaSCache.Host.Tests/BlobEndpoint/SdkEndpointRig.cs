using System.Collections.Concurrent;
using Azure.Core;
using Azure.Core.Pipeline;
using Azure.Storage.Blobs;
using FaaSCache.Caching;
using FaaSCache.Host.BlobEndpoint;
using FaaSCache.Options;
using FaaSCache.Storage;
using FaaSCache.Testing;

namespace FaaSCache.Host.Tests.BlobEndpoint;

/// <summary>
/// The SDK endpoint over a real cachelet and the collection's real Azurite, served on a free loopback port as the host
/// composes it (<see cref="BlobEndpointHosting.StartAsync"/>); SDK clients reach it over real HTTP.
/// </summary>
internal sealed class SdkEndpointRig(SdkEndpointServer server, TempShmDirectory shm, Cachelet cachelet, AzuriteFixture azurite) : IAsyncDisposable
{
    public Cachelet Cachelet => cachelet;

    public AzuriteFixture Azurite => azurite;

    public SdkEndpointAddress Address => server.Address;

    /// <summary>Gets the endpoint's recent requests (operation, status, how a read was served).</summary>
    public SdkRequestLog Requests => server.Requests;

    /// <summary>Gets how each endpoint read was served (the <c>x-faascache-read</c> header), in order.</summary>
    public ConcurrentQueue<string> ReadSources { get; } = new();

    /// <summary>Gets the connection string a worker gets: Azurite's, with the blob endpoint at the rig.</summary>
    public string EndpointConnectionString => server.ConnectionString;

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
            SdkEndpointServer server = await BlobEndpointHosting.StartAsync(cachelet, azurite.ConnectionString);
            return new SdkEndpointRig(server, shm, cachelet, azurite);
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

    /// <summary>
    /// Runs <paramref name="script"/> (an SDK's check script in FaaSCache.Testing's sdk-clients, Node or Python) as a child
    /// process with the endpoint's and Azurite's connection strings in its environment; fails the test with all it wrote
    /// when it exits non-zero (naming what differed). Returns what it printed.
    /// </summary>
    public async Task<string> RunSdkCheckAsync(string script, params string[] arguments)
    {
        ProcessRun run = await SdkClientScripts.RunAsync(script, arguments, TimeSpan.FromMinutes(2), new Dictionary<string, string>
        {
            [SdkClientScripts.EndpointConnectionVariable] = EndpointConnectionString,
            [SdkClientScripts.StorageConnectionVariable] = Azurite.ConnectionString,
        });
        Xunit.Assert.True(run.ExitCode == 0, run.ToString());
        return run.Stdout;
    }

    public async ValueTask DisposeAsync()
    {
        await server.DisposeAsync();
        await Cachelet.DisposeAsync();
        shm.Dispose();
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
