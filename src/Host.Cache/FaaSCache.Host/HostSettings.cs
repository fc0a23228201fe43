namespace FaaSCache.Host;

/// <summary>The host's command-line settings (<c>start</c>).</summary>
public sealed class HostSettings
{
    /// <summary>Gets the function app folder.</summary>
    public required string ScriptRoot { get; init; }

    /// <summary>Gets the HTTP port (Core Tools' default 7071).</summary>
    public int Port { get; init; } = 7071;

    /// <summary>Gets a value indicating whether the cache is on; off behaves like the stock host (bytes over gRPC).</summary>
    public bool CacheEnabled { get; init; } = true;

    /// <summary>Gets the instance id (names this host's shared-memory journal).</summary>
    public required string InstanceId { get; init; }

    /// <summary>Gets the folder holding <c>&lt;language&gt;/worker.config.json</c>.</summary>
    public required string WorkersDirectory { get; init; }

    /// <summary>Gets the app name: names the membership blob and derives the peers' key (default: the folder name).</summary>
    public required string AppName { get; init; }

    /// <summary>Gets a value indicating whether this instance joins the app's membership and talks to peers.</summary>
    public bool Membership { get; init; } = true;

    /// <summary>Gets the address the peer service binds to and advertises.</summary>
    public System.Net.IPAddress PeerAddress { get; init; } = System.Net.IPAddress.Loopback;

    /// <summary>Gets the peer service port (a free one when not given).</summary>
    public int PeerPort { get; init; }

    /// <summary>Gets the peer endpoint advertised in the membership list.</summary>
    public Uri PeerEndpoint => new($"http://{(PeerAddress.AddressFamily == System.Net.Sockets.AddressFamily.InterNetworkV6 ? $"[{PeerAddress}]" : PeerAddress.ToString())}:{PeerPort}/");

    /// <summary>Gets the address the HTTP port binds to (loopback unless a scale controller places the instance in a network namespace).</summary>
    public System.Net.IPAddress ListenAddress { get; init; } = System.Net.IPAddress.Loopback;

    /// <summary>Gets the scale controller's gRPC address, where urgent votes go; null when none runs.</summary>
    public Uri? ScaleController { get; init; }

    /// <summary>Gets the SDK endpoint's loopback port (a free one when 0).</summary>
    public int SdkPort { get; init; }

    /// <summary>
    /// Gets a value indicating whether function keys and the master key are enforced (<c>authLevel</c>, <c>/admin</c>);
    /// off only for local development, as Core Tools' <c>func start</c> without <c>--enableAuth</c>.
    /// </summary>
    public bool EnforceKeys { get; init; } = true;

    /// <summary>Gets the loopback port of FunctionRpc, for this host's language workers only (a free one when 0).</summary>
    public int WorkerPort { get; init; }

    /// <summary>Gets how long an HTTP request that arrives while the host is initializing waits for it (the Functions host's 30 s).</summary>
    public TimeSpan ReadyTimeout { get; init; } = Start.HostLifecycle.DefaultReadyTimeout;

    /// <summary>Gets how often blob-trigger containers are polled for writes made by others.</summary>
    public TimeSpan BlobPollInterval { get; init; } = TimeSpan.FromSeconds(2);

    /// <summary>Gets the file every invocation's blob accesses are appended to (<c>--access-log</c>); null: none.</summary>
    public string? AccessLogPath { get; init; }
}
