namespace FaaSCache.Host.BlobEndpoint;

/// <summary>
/// The SDK endpoint served alone, over a cachelet, on a loopback port of its own (<see cref="BlobEndpointHosting.StartAsync"/>):
/// what the tests and benchmarks stand up instead of a whole host. Disposing it stops the server; the cachelet is the caller's.
/// </summary>
public sealed class SdkEndpointServer : IAsyncDisposable
{
    private readonly WebApplication _web;
    private int _disposed;

    internal SdkEndpointServer(WebApplication web, SdkEndpointAddress address, string storageConnection)
    {
        _web = web;
        Address = address;
        ConnectionString = StorageConnectionString.TryParse(storageConnection)!.WithBlobEndpoint(address.BlobEndpoint);
    }

    /// <summary>Gets where the endpoint listens.</summary>
    public SdkEndpointAddress Address { get; }

    /// <summary>Gets the connection string a worker gets: storage's, with its blob endpoint at this endpoint.</summary>
    public string ConnectionString { get; }

    /// <summary>Gets the endpoint's services (its <see cref="BlobPropertiesCache"/>, <see cref="SdkRequestLog"/>, ...).</summary>
    public IServiceProvider Services => _web.Services;

    /// <summary>Gets the endpoint's recent requests (operation, status, how a read was served).</summary>
    public SdkRequestLog Requests => _web.Services.GetRequiredService<SdkRequestLog>();

    /// <summary>Stops serving (requests in flight are let finish) and releases the server.</summary>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        await _web.StopAsync().ConfigureAwait(false);
        await _web.DisposeAsync().ConfigureAwait(false);
    }
}
