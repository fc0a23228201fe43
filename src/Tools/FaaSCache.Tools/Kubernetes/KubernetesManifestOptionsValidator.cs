using Microsoft.Extensions.Options;

namespace FaaSCache.Tools.Kubernetes;

/// <summary>Checks <see cref="KubernetesManifestOptions"/>: each failure names the command-line option, the value and what is allowed.</summary>
public sealed class KubernetesManifestOptionsValidator : OptionsValidator<KubernetesManifestOptions>
{
    /// <inheritdoc />
    protected override void Check(KubernetesManifestOptions options, List<string> failures)
    {
        if (options.MaxReplicas is < 1 or > KubernetesManifestOptions.MaxReplicasLimit)
        {
            failures.Add($"--max-replicas {options.MaxReplicas} must be from 1 to {KubernetesManifestOptions.MaxReplicasLimit} (the scale controller's --max-instances bound).");
        }

        if (options.Replicas < 0 || options.Replicas > options.MaxReplicas)
        {
            failures.Add($"--replicas {options.Replicas} must be from 0 to --max-replicas ({options.MaxReplicas}).");
        }

        if (options.AppName is not null && !KubernetesManifestOptions.IsAppName(options.AppName))
        {
            failures.Add($"--app-name '{options.AppName}' is not a valid name: lowercase letters, digits and '-', starting with a letter and ending with a letter or digit, at most {KubernetesManifestOptions.MaxAppNameLength} characters (its objects' names, <name>-controller included, are DNS labels).");
        }

        if (!KubernetesManifestOptions.IsNamespaceName(options.Namespace))
        {
            failures.Add($"--namespace '{options.Namespace}' is not a Kubernetes namespace name: lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters.");
        }

        foreach ((string option, string? image) in new[] { ("--image", options.Image), ("--controller-image", options.ControllerImage) })
        {
            if (image is not null && (image.Length == 0 || image.Any(char.IsWhiteSpace)))
            {
                failures.Add($"{option} '{image}' is not an image reference (e.g. registry.example.com/app:1.0; no spaces).");
            }
        }

        if (options.Storage is { } storage && string.IsNullOrWhiteSpace(storage))
        {
            failures.Add("--storage is empty: give the storage account's connection string.");
        }
    }
}
