using System.Text.RegularExpressions;

namespace FaaSCache.Tools.Kubernetes;

/// <summary>
/// What <c>faascache kubernetes manifests</c> is asked for: the app folder and how its objects are named and sized;
/// checked by <see cref="KubernetesManifestOptionsValidator"/>.
/// </summary>
public sealed partial class KubernetesManifestOptions
{
    /// <summary>Default <see cref="ControllerImage"/>.</summary>
    public const string DEFAULT_CONTROLLER_IMAGE = "faascache-controller:dev";

    /// <summary>Default <see cref="Namespace"/>.</summary>
    public const string DEFAULT_NAMESPACE = "default";

    /// <summary>Default <see cref="Replicas"/>.</summary>
    public const int DEFAULT_REPLICAS = 1;

    /// <summary>Default <see cref="MaxReplicas"/> (the controller's default --max-instances).</summary>
    public const int DEFAULT_MAX_REPLICAS = 6;

    /// <summary>The most replicas: the scale controller's own bound on --max-instances (ScaleControllerOptionsValidator).</summary>
    public const int MaxReplicasLimit = 64;

    /// <summary>
    /// The longest app name: the controller's Service is <c>&lt;name&gt;-controller</c>, and a Service name is a DNS-1035
    /// label of at most 63 characters.
    /// </summary>
    public const int MaxAppNameLength = 63 - 11;

    /// <summary>Gets the function app folder (host.json, local.settings.json).</summary>
    public required string ScriptRoot { get; init; }

    /// <summary>Gets the app name; null: the folder's (the host's rule), made a DNS label.</summary>
    public string? AppName { get; init; }

    /// <summary>Gets the app image (a host image with the app at /home/site/wwwroot); null: <c>&lt;name&gt;:latest</c>.</summary>
    public string? Image { get; init; }

    /// <summary>Gets the scale controller's image.</summary>
    public string ControllerImage { get; init; } = DEFAULT_CONTROLLER_IMAGE;

    /// <summary>Gets the host Deployment's replica count before KEDA scales it.</summary>
    public int Replicas { get; init; } = DEFAULT_REPLICAS;

    /// <summary>Gets the most host pods (the ScaledObject's maxReplicaCount, the controller's --max-instances).</summary>
    public int MaxReplicas { get; init; } = DEFAULT_MAX_REPLICAS;

    /// <summary>Gets the namespace of every object.</summary>
    public string Namespace { get; init; } = DEFAULT_NAMESPACE;

    /// <summary>Gets the storage connection the pods use instead of local.settings.json's AzureWebJobsStorage.</summary>
    public string? Storage { get; init; }

    /// <summary>Gets a value indicating whether the two Secrets are left out (the user creates them with kubectl).</summary>
    public bool NoSecrets { get; init; }

    /// <summary>Whether <paramref name="name"/> can name an app's objects (a DNS-1035 label leaving room for <c>-controller</c>).</summary>
    public static bool IsAppName(string name) => name.Length <= MaxAppNameLength && AppNamePattern().IsMatch(name);

    /// <summary>Whether <paramref name="name"/> can name a Kubernetes namespace (a DNS-1123 label of at most 63 characters).</summary>
    public static bool IsNamespaceName(string name) => name.Length <= 63 && DnsLabel().IsMatch(name);

    /// <summary>
    /// <paramref name="name"/> made an app name: lowercased, every run of other characters a '-', a leading digit given
    /// an <c>app-</c> prefix, cut to <see cref="MaxAppNameLength"/>; null when nothing is left.
    /// </summary>
    public static string? ToAppName(string name)
    {
        ArgumentNullException.ThrowIfNull(name);
        string label = NotLabelCharacters().Replace(name.ToLowerInvariant(), "-").Trim('-');
        if (label.Length > 0 && char.IsAsciiDigit(label[0]))
        {
            label = "app-" + label;
        }

        label = label.Length > MaxAppNameLength ? label[..MaxAppNameLength].TrimEnd('-') : label;
        return label.Length == 0 ? null : label;
    }

    [GeneratedRegex("^[a-z]([-a-z0-9]*[a-z0-9])?$", RegexOptions.CultureInvariant)]
    private static partial Regex AppNamePattern();

    [GeneratedRegex("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", RegexOptions.CultureInvariant)]
    private static partial Regex DnsLabel();

    [GeneratedRegex("[^a-z0-9]+", RegexOptions.CultureInvariant)]
    private static partial Regex NotLabelCharacters();
}
