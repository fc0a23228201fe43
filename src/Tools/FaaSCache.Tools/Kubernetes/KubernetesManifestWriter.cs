using k8s;

namespace FaaSCache.Tools.Kubernetes;

/// <summary>
/// The objects of one app on Kubernetes, scaled by KEDA, as one multi-document YAML: the settings and keys Secrets, the
/// host Deployment and Service, the controller's Deployment and Service and the ScaledObject. Each object is made by its
/// collaborator (<see cref="AppSecrets"/>, <see cref="HostPods"/>, <see cref="ControllerPods"/>, <see cref="ScaledObject"/>)
/// and serialized by the KubernetesClient library; this only reads the app, composes and writes.
/// </summary>
public static class KubernetesManifestWriter
{
    /// <summary>
    /// The YAML for <paramref name="options"/>; throws <see cref="FaaSCacheConfigurationException"/> naming every bad option,
    /// or <see cref="FaaSCache.Host.CommandLineException"/> naming what is wrong with the app folder.
    /// </summary>
    public static string Write(KubernetesManifestOptions options)
    {
        _ = new KubernetesManifestOptionsValidator().ThrowIfInvalid(options);
        KubernetesApp app = KubernetesApp.Read(options.ScriptRoot, options.AppName, options.Storage);
        var names = new KubernetesNames(app.Name, options.Namespace);
        PodMemory memory = PodMemory.For(app.CapacityBytes);
        var documents = new List<(string Comment, object Value)>();
        if (!options.NoSecrets)
        {
            documents.Add(("The app settings (local.settings.json's Values but FUNCTIONS_WORKER_RUNTIME), one environment variable each.", AppSecrets.Settings(app, names)));
            documents.Add(($"The host keys, read from {KubernetesNames.KeysMountPath} (AzureWebJobsSecretStorageType=kubernetes): /admin needs the master key.", AppSecrets.Keys(names)));
        }

        string capacity = app.CapacityBytes is { } bytes
            ? string.Create(CultureInfo.InvariantCulture, $"host.json's capacityBytes ({bytes} bytes)")
            : "the host's default capacity (host.json sets none: a quarter of the container's memory)";
        documents.Add(($"The host pods: /dev/shm holds {capacity} plus 50% for the worker's output maps; the memory limit adds {PodMemory.Mebibytes(PodMemory.ProcessBytes)} for the processes.", HostPods.Deployment(app, names, options, memory)));
        documents.Add(("The app's requests: http://" + $"{names.Hosts}.{names.Namespace}.svc.cluster.local/api/...", HostPods.Service(names)));
        documents.Add(("The scale controller: decides from the hosts' votes (membership mode), KEDA acts.", ControllerPods.Deployment(app, names, options)));
        documents.Add(("KEDA's scalerAddress and the hosts' urgent votes (gRPC), /scale/status (HTTP).", ControllerPods.Service(names)));
        documents.Add(("KEDA scales the hosts by the controller's decision (external scaler); idle apps go to zero pods.", ScaledObject.For(names, options.MaxReplicas)));

        var yaml = new StringBuilder();
        yaml.Append(Header(app, names, options));
        foreach ((string comment, object value) in documents)
        {
            yaml.Append("---\n# ").Append(comment).Append('\n').Append(KubernetesYaml.Serialize(value).ReplaceLineEndings("\n").TrimEnd('\n')).Append('\n');
        }

        return yaml.ToString();
    }

    private static string Header(KubernetesApp app, KubernetesNames names, KubernetesManifestOptions options)
    {
        var header = new StringBuilder();
        header.Append(CultureInfo.InvariantCulture, $"# FaaSCache on Kubernetes, scaled by KEDA: the {app.Runtime} app {app.Name} in namespace {names.Namespace} (faascache kubernetes manifests).\n");
        header.Append(CultureInfo.InvariantCulture, $"# The image {options.Image ?? $"{app.Name}:latest"} is a FaaSCache host image with the app at {KubernetesNames.ScriptRoot}. Needs KEDA 2.x.\n");
        if (options.NoSecrets)
        {
            header.Append(CultureInfo.InvariantCulture, $"# Secrets left out (--no-secrets); create them before applying:\n");
            header.Append(CultureInfo.InvariantCulture, $"#   kubectl -n {names.Namespace} create secret generic {names.SettingsSecret}");
            foreach ((string key, _) in app.Settings)
            {
                header.Append(CultureInfo.InvariantCulture, $" \\\n#     --from-literal={key}='...'");
            }

            header.Append(CultureInfo.InvariantCulture, $"\n#   kubectl -n {names.Namespace} create secret generic {names.KeysSecret} \\\n");
            header.Append(CultureInfo.InvariantCulture, $"#     --from-literal={AppSecrets.MasterKey}=\"$(head -c 40 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')\" \\\n");
            header.Append(CultureInfo.InvariantCulture, $"#     --from-literal={AppSecrets.DefaultFunctionKey}=\"$(head -c 40 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')\"\n");
        }

        return header.ToString();
    }
}
