namespace FaaSCache.Testing;

/// <summary>
/// One <see cref="AzuriteServer"/> per test class (<c>IClassFixture&lt;AzuriteFixture&gt;</c>) or per
/// collection (<c>[Collection(AzuriteCollection.Name)]</c>); started before the first test, killed after the last.
/// </summary>
public sealed class AzuriteFixture : IAsyncLifetime
{
    private AzuriteServer? _server;

    public AzuriteServer Server => _server ?? throw new InvalidOperationException("The Azurite fixture has not been started.");

    public string ConnectionString => Server.ConnectionString;

    public Uri BlobEndpoint => Server.BlobEndpoint;

    public BlobServiceClient CreateServiceClient(Action<BlobClientOptions>? configure = null) => Server.CreateServiceClient(configure);

    public Task<BlobContainerClient> CreateContainerAsync(string? prefix = null, CancellationToken cancellationToken = default) =>
        Server.CreateContainerAsync(prefix, cancellationToken);

    public async Task InitializeAsync() => _server = await AzuriteServer.StartAsync();

    public async Task DisposeAsync()
    {
        var current = Interlocked.Exchange(ref _server, null);
        if (current is not null)
        {
            await current.DisposeAsync();
        }
    }
}
