namespace FaaSCache.Tools.Kubernetes;

/// <summary>
/// The host pods of one app (each pod one instance: a cachelet, its language worker, the app from the image) and the
/// Service in front of them. KEDA scales the Deployment through the ScaledObject.
/// </summary>
public static class HostPods
{
    /// <summary>The Deployment of the hosts.</summary>
    public static V1Deployment Deployment(KubernetesApp app, KubernetesNames names, KubernetesManifestOptions options, PodMemory memory)
    {
        ArgumentNullException.ThrowIfNull(app);
        ArgumentNullException.ThrowIfNull(names);
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(memory);
        var container = new V1Container
        {
            Name = "host",
            Image = options.Image ?? $"{app.Name}:latest",
            ImagePullPolicy = "IfNotPresent",
            // The image's ENTRYPOINT is the host executable. Instances find each other through the app's membership blob,
            // advertising the pod IP (downward API); urgent scale votes go to the controller's gRPC port.
            Args =
            [
                "start",
                "--script-root", KubernetesNames.ScriptRoot,
                "--app-name", app.Name,
                "--cache", "on",
                "--membership", "on",
                "--port", Invariant(KubernetesNames.HostHttpPort),
                "--listen-address", "$(POD_IP)",
                "--peer-port", Invariant(KubernetesNames.HostPeerPort),
                "--peer-address", "$(POD_IP)",
                "--instance-id", "$(POD_NAME)",
                "--scale-controller", $"http://{names.ControllerHost}:{Invariant(KubernetesNames.ControllerGrpcPort)}/",
            ],
            Env =
            [
                FieldEnv("POD_IP", "status.podIP"),
                FieldEnv("POD_NAME", "metadata.name"),
                new V1EnvVar { Name = FunctionAppLoader.RuntimeSetting, Value = app.Runtime },
                // Function keys and the master key from the Secret mounted below (the Functions host's Kubernetes layout).
                new V1EnvVar { Name = "AzureWebJobsSecretStorageType", Value = "kubernetes" },
                .. app.Settings.Select(s => SecretEnv(s.Key, names.SettingsSecret)),
            ],
            Ports =
            [
                new V1ContainerPort { ContainerPort = KubernetesNames.HostHttpPort, Name = "http", Protocol = "TCP" },
                new V1ContainerPort { ContainerPort = KubernetesNames.HostPeerPort, Name = "peer", Protocol = "TCP" },
            ],
            // Ready once every worker has loaded the app's functions (503 before); alive while the ping answers.
            ReadinessProbe = new V1Probe { HttpGet = new V1HTTPGetAction { Path = "/admin/host/ready", Port = "http" }, PeriodSeconds = 2, FailureThreshold = 3 },
            LivenessProbe = new V1Probe { HttpGet = new V1HTTPGetAction { Path = "/admin/host/ping", Port = "http" }, InitialDelaySeconds = 10, PeriodSeconds = 10, FailureThreshold = 3 },
            Resources = new V1ResourceRequirements
            {
                Requests = new Dictionary<string, ResourceQuantity> { ["cpu"] = new("500m"), ["memory"] = new(PodMemory.Mebibytes(PodMemory.ProcessBytes)) },
                // The memory emptyDir counts against the container's limit.
                Limits = new Dictionary<string, ResourceQuantity> { ["memory"] = new(PodMemory.Mebibytes(memory.LimitBytes)) },
            },
            VolumeMounts =
            [
                new V1VolumeMount { Name = "shm", MountPath = "/dev/shm" },
                new V1VolumeMount { Name = "keys", MountPath = KubernetesNames.KeysMountPath, ReadOnlyProperty = true },
            ],
        };
        return new V1Deployment
        {
            ApiVersion = "apps/v1",
            Kind = "Deployment",
            Metadata = names.Metadata(names.Hosts, selectable: true),
            Spec = new V1DeploymentSpec
            {
                Replicas = options.Replicas,
                Selector = new V1LabelSelector { MatchLabels = KubernetesNames.Selector(names.Hosts) },
                Template = new V1PodTemplateSpec
                {
                    Metadata = new V1ObjectMeta { Labels = KubernetesNames.Labels(names.Hosts) },
                    Spec = new V1PodSpec
                    {
                        // The host drains in-flight invocations and removes its shared-memory maps on SIGTERM.
                        TerminationGracePeriodSeconds = 30,
                        Containers = [container],
                        Volumes =
                        [
                            new V1Volume { Name = "keys", Secret = new V1SecretVolumeSource { SecretName = names.KeysSecret } },
                            // The cachelet's objects live in /dev/shm, shared with the worker; a container's default is 64 MiB.
                            new V1Volume { Name = "shm", EmptyDir = new V1EmptyDirVolumeSource { Medium = "Memory", SizeLimit = new ResourceQuantity(PodMemory.Mebibytes(memory.ShmBytes)) } },
                        ],
                    },
                },
            },
        };
    }

    /// <summary>The Service the app's requests come through.</summary>
    public static V1Service Service(KubernetesNames names)
    {
        ArgumentNullException.ThrowIfNull(names);
        return names.ClusterIpService(names.Hosts, new V1ServicePort { Name = "http", Port = 80, TargetPort = "http", Protocol = "TCP" });
    }

    /// <summary>An environment variable from the app settings Secret.</summary>
    public static V1EnvVar SecretEnv(string name, string secret) =>
        new() { Name = name, ValueFrom = new V1EnvVarSource { SecretKeyRef = new V1SecretKeySelector { Name = secret, Key = name } } };

    private static V1EnvVar FieldEnv(string name, string path) =>
        new() { Name = name, ValueFrom = new V1EnvVarSource { FieldRef = new V1ObjectFieldSelector { FieldPath = path } } };

    private static string Invariant(int value) => value.ToString(CultureInfo.InvariantCulture);
}
