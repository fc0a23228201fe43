namespace FaaSCache.Testing;

/// <summary>
/// A real Azurite blob service (node_modules/azurite, the azurite-blob entry point) on a free
/// loopback port with its own temporary data folder. Dispose kills it and deletes the folder.
/// <see cref="RestartAsync"/> (AzuriteServer.Restart.cs) stops it and starts it again on the same port and folder.
/// </summary>
public sealed partial class AzuriteServer : IAsyncDisposable
{
    public const string AccountName = "devstoreaccount1";
    public const string AccountKey = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

    /// <summary>Newest service version Azurite 3.35.0 accepts (the SDK's default is newer).</summary>
    public const BlobClientOptions.ServiceVersion PinnedServiceVersion = BlobClientOptions.ServiceVersion.V2025_11_05;

    // Node starting Azurite on a shared 2-core machine under load (load average 40 seen in CI) took more than 30 s.
    public static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(90);

    private static readonly string[] AddressInUseMarkers = ["EADDRINUSE", "address already in use"];

    private readonly OwnedDirectory _dataDirectory;
    private readonly Func<int, string, ChildProcess> _launch;
    private ChildProcess _process;
    private string? _lastProbeError;
    private int _disposed;

    private AzuriteServer(ChildProcess process, Func<int, string, ChildProcess> launch, OwnedDirectory dataDirectory, int port, string endpointHost = "127.0.0.1")
    {
        _process = process;
        _launch = launch;
        _dataDirectory = dataDirectory;
        Port = port;
        BlobEndpoint = new Uri($"http://{endpointHost}:{port}/{AccountName}");
        ConnectionString =
            $"DefaultEndpointsProtocol=http;AccountName={AccountName};AccountKey={AccountKey};BlobEndpoint={BlobEndpoint};";
    }

    public int Port { get; }

    /// <summary>http://127.0.0.1:PORT/devstoreaccount1 (the link's address once <see cref="RouteThrough"/> put one in front).</summary>
    public Uri BlobEndpoint { get; private set; }

    /// <summary>The full devstoreaccount1 connection string with this server's BlobEndpoint (or its link's).</summary>
    public string ConnectionString { get; private set; }

    /// <summary>Gets the link every client reaches this server through, or null (a direct connection).</summary>
    public IAsyncDisposable? Link { get; private set; }

    /// <summary>
    /// From now on, clients given <see cref="ConnectionString"/> / <see cref="BlobEndpoint"/> reach this server through
    /// <paramref name="link"/> at <paramref name="front"/> (storage at a distance); the link is disposed with the server.
    /// </summary>
    public void RouteThrough(System.Net.IPEndPoint front, IAsyncDisposable link)
    {
        ArgumentNullException.ThrowIfNull(front);
        Link = link;
        BlobEndpoint = new Uri($"http://{front.Address}:{front.Port}/{AccountName}");
        ConnectionString = $"DefaultEndpointsProtocol=http;AccountName={AccountName};AccountKey={AccountKey};BlobEndpoint={BlobEndpoint};";
    }

    /// <summary>Azurite's --location folder (deleted on dispose).</summary>
    public string DataDirectory => _dataDirectory.Path;

    /// <summary>Process id of the node process running Azurite (a new one after <see cref="RestartAsync"/>).</summary>
    public int ProcessId => _process.Id;

    /// <summary>Starts Azurite and waits (at most <see cref="StartTimeout"/>) until it answers a real request.</summary>
    public static Task<AzuriteServer> StartAsync(CancellationToken cancellationToken = default) => StartAsync("127.0.0.1", cancellationToken);

    /// <summary>
    /// Starts Azurite listening on <paramref name="blobHost"/> (e.g. 0.0.0.0, so that network namespaces reach it at
    /// their link's root address: <see cref="ConnectionStringAt"/>); <see cref="BlobEndpoint"/> stays on loopback.
    /// </summary>
    public static Task<AzuriteServer> StartAsync(string blobHost, CancellationToken cancellationToken = default) =>
        StartCoreAsync(blobHost, null, "127.0.0.1", cancellationToken);

    /// <summary>
    /// Starts Azurite inside network namespace <paramref name="networkNamespace"/>, listening on <paramref name="address"/>
    /// (the namespace's end of its link): <see cref="BlobEndpoint"/> and <see cref="ConnectionString"/> name that address,
    /// so every client reaches storage over the namespace's (shaped) link, as an app reaches remote blob storage.
    /// </summary>
    public static Task<AzuriteServer> StartInNamespaceAsync(string networkNamespace, System.Net.IPAddress address, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(networkNamespace);
        ArgumentNullException.ThrowIfNull(address);
        return StartCoreAsync(address.ToString(), networkNamespace, address.ToString(), cancellationToken);
    }

    private static async Task<AzuriteServer> StartCoreAsync(string blobHost, string? networkNamespace, string endpointHost, CancellationToken cancellationToken)
    {
        var root = RepositoryRoot.Find();
        var entryPoint = Path.Combine(root, "node_modules", "azurite", "dist", "src", "blob", "main.js");
        if (!File.Exists(entryPoint))
        {
            throw new InvalidOperationException(
                $"Azurite is not installed: '{entryPoint}' is missing. Run the repository setup script " +
                $"(scripts/setup.sh) or `npm ci` in '{root}' to install azurite 3.35.0.");
        }

        // `ip netns exec` execs node in place: the child's pid is node's, and killing it stops Azurite.
        string[] prefix = networkNamespace is null ? ["node"] : ["ip", "netns", "exec", networkNamespace, "node"];

        // Persistent (no --inMemoryPersistence): blobs live in --location, so a restart on the same folder keeps them.
        ChildProcess Launch(int port, string location)
        {
            try
            {
                return ChildProcess.Start(
                    prefix[0],
                    [
                        .. prefix[1..],
                        entryPoint,
                        "--blobHost", blobHost,
                        "--blobPort", port.ToString(System.Globalization.CultureInfo.InvariantCulture),
                        "--location", location,
                        "--silent", "--loose", "--skipApiVersionCheck", "--disableTelemetry",
                    ],
                    root);
            }
            catch (Win32Exception e)
            {
                throw new InvalidOperationException(
                    "Could not start `node` to run Azurite. Install Node.js 20 and run the repository setup script (scripts/setup.sh).", e);
            }
        }

        var recipe = new ServerStarter.Recipe<AzuriteServer>(
            "Azurite",
            port =>
            {
                var directory = new OwnedDirectory(Path.GetTempPath(), "faascache-azurite");
                try
                {
                    return new AzuriteServer(Launch(port, directory.Path), Launch, directory, port, endpointHost);
                }
                catch
                {
                    directory.Dispose();
                    throw;
                }
            },
            (server, token) => server.AnswersAsync(token),
            server => server._process.HasExited,
            server => server._process.CapturedOutput + (server._lastProbeError is { } probe ? $"{Environment.NewLine}(last probe error: {probe})" : string.Empty),
            server => server._process.ExitCode,
            AddressInUseMarkers);
        return await ServerStarter.StartAsync(recipe, StartTimeout, cancellationToken);
    }

    /// <summary>The connection string with the blob endpoint at <paramref name="address"/> (Azurite started on 0.0.0.0 answers there).</summary>
    public string ConnectionStringAt(System.Net.IPAddress address) =>
        ConnectionString.Replace($"BlobEndpoint={BlobEndpoint}", $"BlobEndpoint=http://{address}:{Port}/{AccountName}", StringComparison.Ordinal);

    /// <summary>The installed Azurite's version (node_modules/azurite/package.json), as the benchmarks print it.</summary>
    public static string InstalledVersion()
    {
        string path = Path.Combine(RepositoryRoot.Find(), "node_modules", "azurite", "package.json");
        using System.Text.Json.JsonDocument package = System.Text.Json.JsonDocument.Parse(File.ReadAllText(path));
        return package.RootElement.GetProperty("version").GetString() ?? "?";
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
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        if (Link is not null)
        {
            await Link.DisposeAsync();
        }

        // A restart under way finishes first, so the process it starts is the one killed here.
        await _restartGate.WaitAsync();
        try
        {
            await _process.DisposeAsync();
        }
        finally
        {
            _dataDirectory.Dispose();
            _restartGate.Release();
        }
    }

    /// <summary>True when a real request succeeds.</summary>
    private async Task<bool> AnswersAsync(CancellationToken cancellationToken)
    {
        // The cheap port check is for loopback; in a namespace the request below is the check.
        if (BlobEndpoint.IsLoopback && !await TcpPorts.IsAcceptingAsync(Port, TimeSpan.FromSeconds(1), cancellationToken))
        {
            return false;
        }

        var probe = CreateServiceClient(options =>
        {
            options.Retry.MaxRetries = 0;
            options.Retry.NetworkTimeout = TimeSpan.FromSeconds(5);
        });
        try
        {
            await probe.GetPropertiesAsync(cancellationToken);
            return true;
        }
        catch (Exception e) when (!cancellationToken.IsCancellationRequested)
        {
            _lastProbeError = $"{e.GetType().Name}: {e.Message}";
            return false;
        }
    }
}
