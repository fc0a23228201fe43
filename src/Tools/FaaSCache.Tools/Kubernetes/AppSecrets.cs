using System.Buffers.Text;
using System.Net;
using System.Security.Cryptography;
using Azure.Storage.Blobs;

namespace FaaSCache.Tools.Kubernetes;

/// <summary>
/// The app's two Secrets: its settings (every app setting but the runtime, which is a plain value) and its host keys,
/// named as the host reads them from the mounted Secret (<see cref="FaaSCache.Security.Keys.MountedSecretKeyStore"/>).
/// </summary>
public static class AppSecrets
{
    /// <summary>The master key's entry (the Functions host's Kubernetes layout).</summary>
    public const string MasterKey = "host.master";

    /// <summary>The default host function key's entry.</summary>
    public const string DefaultFunctionKey = "host.function.default";

    /// <summary>The settings Secret; throws when the storage it would hand the pods is the development storage or none.</summary>
    public static V1Secret Settings(KubernetesApp app, KubernetesNames names)
    {
        ArgumentNullException.ThrowIfNull(app);
        ArgumentNullException.ThrowIfNull(names);
        CheckStorage(app.Settings.First(s => s.Key == FunctionAppLoader.StorageSetting).Value, app.StorageSource);
        return new V1Secret
        {
            ApiVersion = "v1",
            Kind = "Secret",
            Metadata = names.Metadata(names.SettingsSecret),
            Type = "Opaque",
            StringData = app.Settings.ToDictionary(s => s.Key, s => s.Value, StringComparer.Ordinal),
        };
    }

    /// <summary>The keys Secret: a fresh master key and default function key.</summary>
    public static V1Secret Keys(KubernetesNames names)
    {
        ArgumentNullException.ThrowIfNull(names);
        return new V1Secret
        {
            ApiVersion = "v1",
            Kind = "Secret",
            Metadata = names.Metadata(names.KeysSecret),
            Type = "Opaque",
            StringData = new Dictionary<string, string>(StringComparer.Ordinal)
            {
                [MasterKey] = NewKey(),
                [DefaultFunctionKey] = NewKey(),
            },
        };
    }

    /// <summary>A key as func makes one: 40 random bytes, base64url without padding.</summary>
    public static string NewKey() => Base64Url.EncodeToString(RandomNumberGenerator.GetBytes(40));

    // In a pod, 127.0.0.1 is the pod itself: the development storage (or any loopback endpoint) is never there.
    private static void CheckStorage(string connection, string source)
    {
        const string Advice = "In a pod, 127.0.0.1 is the pod itself, not this machine's Azurite: pass --storage '<a connection string the pods can reach>' "
            + "(e.g. DefaultEndpointsProtocol=https;AccountName=...;AccountKey=...), or --no-secrets and create the Secret yourself.";
        if (connection.Length == 0)
        {
            throw new CommandLineException($"{FunctionAppLoader.StorageSetting} is not set in {source}. {Advice}");
        }

        Uri endpoint;
        try
        {
            endpoint = new BlobServiceClient(connection).Uri;
        }
        catch (Exception e) when (e is FormatException or ArgumentException or InvalidOperationException)
        {
            throw new CommandLineException($"{FunctionAppLoader.StorageSetting} is not a storage connection string ({e.Message.TrimEnd('.')}): give one such as 'DefaultEndpointsProtocol=https;AccountName=...;AccountKey=...'.", e);
        }

        bool development = connection.Replace(" ", string.Empty, StringComparison.Ordinal).Contains("UseDevelopmentStorage=true", StringComparison.OrdinalIgnoreCase);
        if (development || endpoint.IsLoopback || (IPAddress.TryParse(endpoint.Host, out IPAddress? address) && IPAddress.IsLoopback(address)))
        {
            throw new CommandLineException(
                $"{FunctionAppLoader.StorageSetting} is {(development ? "UseDevelopmentStorage=true" : $"at {endpoint.GetLeftPart(UriPartial.Authority)}")} (from {source}). {Advice}");
        }
    }
}
