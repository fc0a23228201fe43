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

    /// <summary>Gets how often blob-trigger containers are polled for writes made by others.</summary>
    public TimeSpan BlobPollInterval { get; init; } = TimeSpan.FromSeconds(2);
}
