using Microsoft.AspNetCore.Server.Kestrel.Core;
using Yarp.ReverseProxy.Forwarder;

namespace FaaSCache.Host.BlobEndpoint;

/// <summary>Where the SDK endpoint listens, for the banner and the workers' settings.</summary>
/// <param name="Port">The loopback port.</param>
/// <param name="AccountName">The account it serves.</param>
public sealed record SdkEndpointAddress(int Port, string AccountName)
{
    /// <summary>Gets the blob endpoint the workers' connections name (path-style, as Azurite's).</summary>
    public Uri BlobEndpoint => new($"http://127.0.0.1:{Port}/{AccountName}");
}

/// <summary>Composes the SDK endpoint into the host: a loopback port, its services, and the workers' app settings.</summary>
public static class BlobEndpointHosting
{
    /// <summary>
    /// The endpoint's address when it runs: the cache is on, host.json does not say <c>sdkEndpoint: false</c>, and the
    /// app's storage connection carries an account key (requests are verified with it before anything is served).
    /// </summary>
    public static SdkEndpointAddress? Plan(bool cacheEnabled, IConfiguration configuration, string storageConnection, int port, params int[] taken)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        if (!cacheEnabled || StorageConnectionString.TryParse(storageConnection) is not { AccountName: { } account, AccountKey: not null })
        {
            return null;
        }

        bool enabled;
        try
        {
            enabled = FaaSCacheOptionsReader.Read(configuration.GetSection(FaaSCacheOptionsReader.SectionPath)).SdkEndpoint;
        }
        catch (FaaSCacheConfigurationException)
        {
            // The composition root reports the bad host.json with its full message when the host starts.
            return null;
        }

        return enabled ? new SdkEndpointAddress(port == 0 ? Hosting.FreePorts.GetOtherThan(System.Net.IPAddress.Loopback, taken) : port, account) : null;
    }

    /// <summary>Listens on the endpoint's loopback port (HTTP/1.1: what the SDKs pool).</summary>
    public static void Listen(KestrelServerOptions kestrel, SdkEndpointAddress address)
    {
        ArgumentNullException.ThrowIfNull(kestrel);
        ArgumentNullException.ThrowIfNull(address);
        kestrel.Listen(IPAddress.Loopback, address.Port, l => l.Protocols = HttpProtocols.Http1);
    }

    /// <summary>Registers the endpoint's services.</summary>
    public static IServiceCollection AddSdkEndpoint(this IServiceCollection services, SdkEndpointAddress address, string storageConnection)
    {
        ArgumentNullException.ThrowIfNull(address);
        StorageConnectionString connection = StorageConnectionString.TryParse(storageConnection)
            ?? throw new ArgumentException("The storage connection string names no account.", nameof(storageConnection));
        services.AddSingleton(address);
        services.AddHttpForwarder();
        services.AddSingleton(_ => new StorageRequestAuthenticator(connection.AccountName!, connection.AccountKey!));
        services.AddSingleton(sp => new BlobPropertiesCache(
            new BlobServiceClient(storageConnection, AzureBlobStore.CreateClientOptions()),
            sp.GetService<TimeProvider>() ?? TimeProvider.System));
        // Uncommitted blocks: a quarter of the cache's capacity at most, so uploads cannot crowd out cached objects.
        services.AddSingleton(sp => new BlockStaging(
            Math.Max(64L * 1024 * 1024, sp.GetRequiredService<Microsoft.Extensions.Options.IOptions<FaaSCacheOptions>>().Value.EffectiveCapacityBytes / 4),
            sp.GetService<TimeProvider>() ?? TimeProvider.System));
        services.AddSingleton(sp => new StorageForwarder(
            sp.GetRequiredService<IHttpForwarder>(),
            sp.GetRequiredService<IBlobStore>().AccountUri,
            sp.GetRequiredService<StorageRequestAuthenticator>()));
        services.AddSingleton(sp => new BlobEndpointHandler(
            sp.GetRequiredService<IObjectCache>(),
            sp.GetRequiredService<BlobPropertiesCache>(),
            sp.GetRequiredService<BlockStaging>(),
            sp.GetRequiredService<StorageRequestAuthenticator>(),
            sp.GetRequiredService<StorageForwarder>(),
            sp.GetRequiredService<SdkRequestLog>(),
            sp.GetRequiredService<ILogger<BlobEndpointHandler>>()));
        services.AddSingleton<SdkRequestLog>();
        return services;
    }

    /// <summary>Answers every request on the endpoint's port with the handler (nothing else is served there).</summary>
    public static void MapSdkEndpoint(this WebApplication web, SdkEndpointAddress address)
    {
        ArgumentNullException.ThrowIfNull(web);
        ArgumentNullException.ThrowIfNull(address);
        BlobEndpointHandler handler = web.Services.GetRequiredService<BlobEndpointHandler>();
        web.MapWhen(c => c.Connection.LocalPort == address.Port, branch => branch.Run(handler.HandleAsync));
        // On the host's HTTP port with the other admin endpoints: how the SDK requests were served.
        web.MapGet("/admin/sdk-endpoint/requests", (SdkRequestLog log, string? key) => Results.Json(log.Recent(key)));
    }

    /// <summary>
    /// Serves the endpoint alone over <paramref name="cachelet"/>, on a loopback port of its own (<paramref name="port"/>,
    /// or a free one when 0), for the account of <paramref name="storageConnection"/> (the cachelet's storage, whose key
    /// verifies the requests): the host's composition (<see cref="Listen"/>, <see cref="AddSdkEndpoint"/>,
    /// <see cref="MapSdkEndpoint"/>) on a Kestrel of its own, for tests and benchmarks. <paramref name="inFront"/> may add
    /// middleware that sees every request before the endpoint does.
    /// </summary>
    public static async Task<SdkEndpointServer> StartAsync(Cachelet cachelet, string storageConnection, int port = 0, Action<IApplicationBuilder>? inFront = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(cachelet);
        string account = StorageConnectionString.TryParse(storageConnection)?.AccountName
            ?? throw new ArgumentException("The storage connection string names no account.", nameof(storageConnection));
        var address = new SdkEndpointAddress(port == 0 ? Hosting.FreePorts.Get() : port, account);
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.ConfigureKestrel(k =>
        {
            k.Limits.MaxRequestBodySize = null;
            Listen(k, address);
        });
        builder.Services.AddSingleton<IObjectCache>(cachelet);
        builder.Services.AddSingleton<ICacheAdmin>(cachelet);
        builder.Services.AddSingleton(cachelet.Storage);
        builder.Services.AddSingleton(Microsoft.Extensions.Options.Options.Create(cachelet.Options));
        builder.Services.AddSdkEndpoint(address, storageConnection);
        WebApplication web = builder.Build();
        try
        {
            inFront?.Invoke(web);
            web.MapSdkEndpoint(address);
            await web.StartAsync(cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            await web.DisposeAsync().ConfigureAwait(false);
            throw;
        }

        return new SdkEndpointServer(web, address, storageConnection);
    }

    /// <summary>
    /// The workers' app settings with every connection string of the app's storage account pointing its blob endpoint
    /// at this instance's endpoint, so that SDK clients built from the setting (and SDK-type bindings) read through
    /// the cache. Identity-based connections (<c>&lt;name&gt;__blobServiceUri</c>) are left alone: the SDKs send
    /// bearer tokens over HTTPS only, and this endpoint is plain HTTP on loopback.
    /// </summary>
    public static Dictionary<string, string> PointWorkersAtEndpoint(IReadOnlyDictionary<string, string> settings, string storageConnection, SdkEndpointAddress address)
    {
        ArgumentNullException.ThrowIfNull(settings);
        ArgumentNullException.ThrowIfNull(address);
        var result = new Dictionary<string, string>(settings, StringComparer.Ordinal);
        string? account = StorageConnectionString.TryParse(storageConnection)?.AccountName;
        foreach ((string name, string value) in settings)
        {
            if (StorageConnectionString.TryParse(value) is { } connection
                && string.Equals(connection.AccountName, account, StringComparison.Ordinal)
                && connection.AccountKey is not null)
            {
                result[name] = connection.WithBlobEndpoint(address.BlobEndpoint);
            }
        }

        return result;
    }
}
