namespace FaaSCache.Security.Keys;

/// <summary>The host's keys: the master key, the host function keys and the system keys, by name.</summary>
/// <param name="MasterKey">The master key (admin level).</param>
/// <param name="FunctionKeys">Host function keys: they open every function-level function.</param>
/// <param name="SystemKeys">System keys (extension webhooks).</param>
public sealed record HostKeys(string MasterKey, IReadOnlyDictionary<string, string> FunctionKeys, IReadOnlyDictionary<string, string> SystemKeys);

/// <summary>Where keys come from: the Functions host's secret repositories (<c>AzureWebJobsSecretStorageType</c>).</summary>
public interface IKeyStore
{
    /// <summary>Gets a description for the banner and errors (the folder the keys are in).</summary>
    string Description { get; }

    /// <summary>The host's keys, created when the store allows it and they do not exist yet.</summary>
    HostKeys GetHostKeys();

    /// <summary>
    /// The system key <paramref name="name"/> (an extension's webhook key, e.g. <c>blobs_extension</c>), made when the store
    /// allows it and it does not exist yet; null when it does not exist and cannot be made.
    /// </summary>
    string? EnsureSystemKey(string name);

    /// <summary>The keys of one function by name (lower-cased, as the Functions host files them), created when allowed; empty when none.</summary>
    IReadOnlyDictionary<string, string> GetFunctionKeys(string functionName);
}
