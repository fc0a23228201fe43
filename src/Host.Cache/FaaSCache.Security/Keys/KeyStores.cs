namespace FaaSCache.Security.Keys;

/// <summary>Picks the key store the app settings name, as the Functions host does.</summary>
public static class KeyStores
{
    /// <summary>The setting that names the store.</summary>
    public const string StorageTypeSetting = "AzureWebJobsSecretStorageType";

    /// <summary>The Functions host's setting for the files store's folder.</summary>
    public const string SecretsPathSetting = "FUNCTIONS_SECRETS_PATH";

    /// <summary>Where a mounted keys Secret is read (the Functions host's fixed path; a setting here so tests and pods can move it).</summary>
    public const string MountedSecretPathSetting = "FAASCACHE_KUBERNETES_KEYS_PATH";

    /// <summary>
    /// The store for an app: <c>files</c> (the default here) in <see cref="SecretsPathSetting"/> or
    /// <c>&lt;app&gt;/.faascache/secrets</c>; <c>kubernetes</c> from the mounted Secret. Others are refused with what to use.
    /// </summary>
    public static IKeyStore Create(Func<string, string?> setting, string appRoot)
    {
        ArgumentNullException.ThrowIfNull(setting);
        string type = setting(StorageTypeSetting)?.Trim() ?? string.Empty;
        if (type.Length == 0 || type.Equals("files", StringComparison.OrdinalIgnoreCase))
        {
            return new FileKeyStore(setting(SecretsPathSetting) is { Length: > 0 } path ? path : Path.Combine(appRoot, ".faascache", "secrets"));
        }

        if (type.Equals("kubernetes", StringComparison.OrdinalIgnoreCase))
        {
            if (setting("AzureWebJobsKubernetesSecretName") is { Length: > 0 } secretName)
            {
                throw new KeyStoreException(
                    $"AzureWebJobsKubernetesSecretName={secretName}: reading keys through the Kubernetes API is not supported; mount the keys Secret at {MountedSecretKeyStore.DefaultDirectory} instead (func kubernetes deploy --mount-funckeys-as-containervolume) and leave the setting out.");
            }

            return new MountedSecretKeyStore(setting(MountedSecretPathSetting) is { Length: > 0 } mounted ? mounted : MountedSecretKeyStore.DefaultDirectory);
        }

        throw new KeyStoreException($"{StorageTypeSetting}={type} is not supported here; use files (keys in {SecretsPathSetting} or <app>/.faascache/secrets) or kubernetes (a Secret mounted at {MountedSecretKeyStore.DefaultDirectory}).");
    }
}
