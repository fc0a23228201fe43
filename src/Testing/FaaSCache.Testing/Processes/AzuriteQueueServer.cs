namespace FaaSCache.Testing;

/// <summary>
/// Azurite's queue service (the same azurite 3.35.0 as <see cref="AzuriteServer"/>, its <c>dist/src/queue/main.js</c>) on
/// a free loopback port, for what uses storage queues (the blob triggers' poison queue); stopped, and its data folder
/// removed, on dispose.
/// </summary>
public sealed class AzuriteQueueServer : IAsyncDisposable
{
    private readonly ChildProcess _process;
    private readonly OwnedDirectory _data;

    private AzuriteQueueServer(ChildProcess process, OwnedDirectory data, int port)
    {
        _process = process;
        _data = data;
        Port = port;
    }

    /// <summary>Gets the port.</summary>
    public int Port { get; }

    /// <summary>Gets the queue endpoint, as a connection string's <c>QueueEndpoint</c>.</summary>
    public Uri QueueEndpoint => new($"http://127.0.0.1:{Port}/{AzuriteServer.AccountName}");

    /// <summary><paramref name="connectionString"/> (a blob Azurite's) with this queue endpoint added.</summary>
    public string WithQueues(string connectionString) => $"{connectionString.TrimEnd(';')};QueueEndpoint={QueueEndpoint};";

    /// <summary>Starts the queue service and waits until it accepts connections.</summary>
    public static async Task<AzuriteQueueServer> StartAsync(CancellationToken cancellationToken = default)
    {
        string root = RepositoryRoot.Find();
        string entryPoint = Path.Combine(root, "node_modules", "azurite", "dist", "src", "queue", "main.js");
        if (!File.Exists(entryPoint))
        {
            throw new InvalidOperationException($"Azurite's queue service is not installed: '{entryPoint}' is missing. Run scripts/setup.sh (it installs azurite 3.35.0).");
        }

        int port = FreePorts.Get();
        var data = new OwnedDirectory(Path.GetTempPath(), "faascache-azurite-queue");
        ChildProcess process = ChildProcess.Start(
            "node",
            [entryPoint, "--queueHost", "127.0.0.1", "--queuePort", port.ToString(CultureInfo.InvariantCulture), "--location", data.Path, "--silent", "--loose", "--skipApiVersionCheck", "--disableTelemetry"],
            root);
        var server = new AzuriteQueueServer(process, data, port);
        var clock = Stopwatch.StartNew();
        while (true)
        {
            try
            {
                using var client = new TcpClient();
                await client.ConnectAsync("127.0.0.1", port, cancellationToken);
                return server;
            }
            catch (SocketException) when (clock.Elapsed < AzuriteServer.StartTimeout && !process.HasExited)
            {
                await Task.Delay(100, cancellationToken);
            }
            catch
            {
                string output = process.CapturedOutput;
                await server.DisposeAsync();
                throw new InvalidOperationException($"Azurite's queue service did not start on port {port}:{Environment.NewLine}{output}");
            }
        }
    }

    /// <inheritdoc />
    public async ValueTask DisposeAsync()
    {
        await _process.DisposeAsync();
        _data.Dispose();
    }
}
