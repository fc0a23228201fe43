namespace FaaSCache.Security.Keys;

/// <summary>
/// The Functions host's Kubernetes repository read from a mounted Secret (<c>AzureWebJobsSecretStorageType=kubernetes</c>,
/// the Secret at <c>/run/secrets/functions-keys</c>, as <c>func kubernetes deploy --mount-funckeys-as-containervolume</c>
/// sets it up): one file per key, named <c>host.master</c>, <c>host.function.&lt;name&gt;</c>, <c>host.systemKey.&lt;name&gt;</c>
/// and <c>functions.&lt;function&gt;.&lt;name&gt;</c>. Read-only: keys are never made here, and a missing master key stops start-up.
/// </summary>
public sealed class MountedSecretKeyStore(string directory) : IKeyStore
{
    /// <summary>Where the Functions host reads a mounted keys Secret.</summary>
    public const string DefaultDirectory = "/run/secrets/functions-keys";

    /// <inheritdoc />
    public string Description => $"the Kubernetes Secret mounted at {directory}";

    /// <inheritdoc />
    public HostKeys GetHostKeys()
    {
        Dictionary<string, string> all = ReadAll();
        if (!all.TryGetValue("host.master", out string? master) || master.Length == 0)
        {
            throw new KeyStoreException($"No master key in {directory}: the keys Secret needs an entry 'host.master' (func kubernetes deploy makes one; or `faascache kubernetes manifests`).");
        }

        return new HostKeys(master, Prefixed(all, "host.function."), Prefixed(all, "host.systemKey."));
    }

    /// <inheritdoc />
    public string? EnsureSystemKey(string name) => GetHostKeys().SystemKeys.TryGetValue(name, out string? key) ? key : null;

    /// <inheritdoc />
    public IReadOnlyDictionary<string, string> GetFunctionKeys(string functionName)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(functionName);
        return Prefixed(ReadAll(), $"functions.{functionName.ToLowerInvariant()}.");
    }

    private static Dictionary<string, string> Prefixed(Dictionary<string, string> all, string prefix) =>
        all.Where(p => p.Key.StartsWith(prefix, StringComparison.Ordinal) && p.Key.Length > prefix.Length && p.Value.Length > 0)
            .ToDictionary(p => p.Key[prefix.Length..], p => p.Value, StringComparer.Ordinal);

    // Kubernetes updates a mounted Secret in place (through symlinks): read it each time; a dozen small files.
    private Dictionary<string, string> ReadAll()
    {
        if (!Directory.Exists(directory))
        {
            throw new KeyStoreException($"AzureWebJobsSecretStorageType is kubernetes, but {directory} does not exist: mount the keys Secret there.");
        }

        var keys = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (string file in Directory.EnumerateFiles(directory))
        {
            string name = Path.GetFileName(file);
            if (!name.StartsWith("..", StringComparison.Ordinal))
            {
                keys[name] = File.ReadAllText(file).Trim();
            }
        }

        return keys;
    }
}
