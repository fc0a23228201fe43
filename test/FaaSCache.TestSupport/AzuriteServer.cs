using System.ComponentModel;
using System.Text;
using Azure.Storage.Blobs;

namespace FaaSCache.TestSupport;

/// <summary>
/// A real Azurite blob service (node_modules/azurite, the azurite-blob entry point) on a free
/// loopback port with its own temporary data folder. Dispose kills it and deletes the folder.
/// </summary>
public sealed class AzuriteServer : IAsyncDisposable
{
    public const string AccountName = "devstoreaccount1";
    public const string AccountKey = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

    /// <summary>Newest service version Azurite 3.35.0 accepts (the SDK's default is newer).</summary>
    public const BlobClientOptions.ServiceVersion PinnedServiceVersion = BlobClientOptions.ServiceVersion.V2025_11_05;

    public static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(30);

    private const int MaxPortAttempts = 5;
    private static readonly string[] AddressInUseMarkers = ["EADDRINUSE", "address already in use"];

    private readonly ChildProcess process;
    private readonly OwnedDirectory dataDirectory;
    private string? lastProbeError;
    private int disposed;

    private AzuriteServer(ChildProcess process, OwnedDirectory dataDirectory, int port)
    {
        this.process = process;
        this.dataDirectory = dataDirectory;
        Port = port;
        BlobEndpoint = new Uri($"http://127.0.0.1:{port}/{AccountName}");
        ConnectionString =
            $"DefaultEndpointsProtocol=http;AccountName={AccountName};AccountKey={AccountKey};BlobEndpoint={BlobEndpoint};";
    }

    public int Port { get; }

    /// <summary>http://127.0.0.1:PORT/devstoreaccount1</summary>
    public Uri BlobEndpoint { get; }

    /// <summary>The full devstoreaccount1 connection string with this server's BlobEndpoint.</summary>
    public string ConnectionString { get; }

    /// <summary>Azurite's --location folder (deleted on dispose).</summary>
    public string DataDirectory => dataDirectory.Path;

    /// <summary>Process id of the node process running Azurite.</summary>
    public int ProcessId => process.Id;

    /// <summary>Starts Azurite and waits (at most <see cref="StartTimeout"/>) until it answers a real request.</summary>
    public static async Task<AzuriteServer> StartAsync(CancellationToken cancellationToken = default)
    {
        var root = RepositoryRoot.Find();
        var entryPoint = Path.Combine(root, "node_modules", "azurite", "dist", "src", "blob", "main.js");
        if (!File.Exists(entryPoint))
        {
            throw new InvalidOperationException(
                $"Azurite is not installed: '{entryPoint}' is missing. Run the repository setup script " +
                $"(scripts/setup.sh) or `npm ci` in '{root}' to install azurite 3.35.0.");
        }

        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        deadline.CancelAfter(StartTimeout);
        var earlierAttempts = new StringBuilder();

        for (var attempt = 1; ; attempt++)
        {
            var port = TcpPorts.GetFreePort();
            var directory = new OwnedDirectory(Path.GetTempPath(), "faascache-azurite");
            ChildProcess child;
            try
            {
                child = ChildProcess.Start(
                    "node",
                    [
                        entryPoint,
                        "--blobHost", "127.0.0.1",
                        "--blobPort", port.ToString(System.Globalization.CultureInfo.InvariantCulture),
                        "--location", directory.Path,
                        "--silent", "--loose", "--skipApiVersionCheck",
                    ],
                    root);
            }
            catch (Win32Exception e)
            {
                directory.Dispose();
                throw new InvalidOperationException(
                    "Could not start `node` to run Azurite. Install Node.js 20 and run the repository setup script (scripts/setup.sh).", e);
            }

            var server = new AzuriteServer(child, directory, port);
            bool ready;
            try
            {
                ready = await server.WaitUntilReadyAsync(deadline.Token);
            }
            catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
            {
                var output = child.CapturedOutput;
                await server.DisposeAsync();
                throw new TimeoutException(
                    $"Azurite did not become ready on 127.0.0.1:{port} within {StartTimeout.TotalSeconds:0} s " +
                    $"(last probe error: {server.lastProbeError ?? "port never accepted a connection"}).{Environment.NewLine}" +
                    $"Azurite output:{Environment.NewLine}{output}{earlierAttempts}");
            }
            catch
            {
                await server.DisposeAsync();
                throw;
            }

            if (ready)
            {
                return server;
            }

            var exitCode = child.ExitCode;
            var exitOutput = child.CapturedOutput;
            await server.DisposeAsync();
            var portRace = AddressInUseMarkers.Any(m => exitOutput.Contains(m, StringComparison.OrdinalIgnoreCase));
            if (portRace && attempt < MaxPortAttempts)
            {
                earlierAttempts.AppendLine().Append("(attempt ").Append(attempt).Append(": port ").Append(port).Append(" was taken)");
                continue;
            }

            throw new InvalidOperationException(
                $"Azurite exited with code {exitCode} before it was ready on 127.0.0.1:{port}.{Environment.NewLine}" +
                $"Azurite output:{Environment.NewLine}{exitOutput}{earlierAttempts}");
        }
    }

    /// <summary>Client options pinned to <see cref="PinnedServiceVersion"/>.</summary>
    public static BlobClientOptions CreateClientOptions() => new(PinnedServiceVersion);

    /// <summary>A client for this server pinned to <see cref="PinnedServiceVersion"/>; <paramref name="configure"/> may add policies etc.</summary>
    public BlobServiceClient CreateServiceClient(Action<BlobClientOptions>? configure = null)
    {
        var options = CreateClientOptions();
        configure?.Invoke(options);
        return new BlobServiceClient(ConnectionString, options);
    }

    /// <summary>Creates a fresh, uniquely named container (named <paramref name="prefix"/>-&lt;guid&gt;).</summary>
    public async Task<BlobContainerClient> CreateContainerAsync(string? prefix = null, CancellationToken cancellationToken = default)
    {
        var container = CreateServiceClient().GetBlobContainerClient(NewContainerName(prefix));
        await container.CreateAsync(cancellationToken: cancellationToken);
        return container;
    }

    /// <summary>A valid, unique container name: the prefix lower-cased and reduced to [a-z0-9-], then a guid.</summary>
    public static string NewContainerName(string? prefix = null)
    {
        var cleaned = new StringBuilder();
        foreach (var c in (prefix ?? "test").ToLowerInvariant())
        {
            var next = c is (>= 'a' and <= 'z') or (>= '0' and <= '9') ? c : '-';
            if (next == '-' && (cleaned.Length == 0 || cleaned[^1] == '-'))
            {
                continue;
            }

            cleaned.Append(next);
        }

        var head = cleaned.ToString().TrimEnd('-');
        if (head.Length > 30)
        {
            head = head[..30].TrimEnd('-');
        }

        var guid = Guid.NewGuid().ToString("N");
        return head.Length == 0 ? guid : $"{head}-{guid}";
    }

    /// <summary>Kills the Azurite process tree, waits for it to exit and deletes its data folder.</summary>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref disposed, 1) != 0)
        {
            return;
        }

        try
        {
            await process.DisposeAsync();
        }
        finally
        {
            dataDirectory.Dispose();
        }
    }

    /// <summary>True once a real request succeeds; false when the process exited first.</summary>
    private async Task<bool> WaitUntilReadyAsync(CancellationToken cancellationToken)
    {
        var probe = CreateServiceClient(options =>
        {
            options.Retry.MaxRetries = 0;
            options.Retry.NetworkTimeout = TimeSpan.FromSeconds(5);
        });

        while (true)
        {
            cancellationToken.ThrowIfCancellationRequested();
            if (process.HasExited)
            {
                return false;
            }

            if (await TcpPorts.IsAcceptingAsync(Port, TimeSpan.FromSeconds(1), cancellationToken))
            {
                try
                {
                    await probe.GetPropertiesAsync(cancellationToken);
                    return true;
                }
                catch (Exception e) when (!cancellationToken.IsCancellationRequested)
                {
                    lastProbeError = $"{e.GetType().Name}: {e.Message}";
                }
            }

            await Task.Delay(TimeSpan.FromMilliseconds(100), cancellationToken);
        }
    }
}
