namespace FaaSCache.Tools.Kubernetes;

/// <summary>
/// The app's scale controller (§4): with <c>--instances membership</c> it finds the host pods through the app's
/// membership blob, polls their votes and serves the decision to KEDA; KEDA acts. One per app: the decisions
/// (cool-downs, history) live in its memory.
/// </summary>
public static class ControllerPods
{
    /// <summary>The controller's own command line: decide only, within the ScaledObject's bounds (idle 0, max).</summary>
    public static List<string> Args(KubernetesApp app, KubernetesManifestOptions options)
    {
        ArgumentNullException.ThrowIfNull(app);
        ArgumentNullException.ThrowIfNull(options);
        return
        [
            "--instances", "membership",
            "--app-name", app.Name,
            "--min-instances", "0",
            "--max-instances", options.MaxReplicas.ToString(CultureInfo.InvariantCulture),
            "--listen-address", "0.0.0.0",
            "--port", Invariant(KubernetesNames.ControllerHttpPort),
            "--grpc-port", Invariant(KubernetesNames.ControllerGrpcPort),
            // The front door routes /api/* to the members' HTTP port at their advertised (pod) address.
            "--member-http-port", Invariant(KubernetesNames.HostHttpPort),
        ];
    }

    /// <summary>The controller's Deployment (one replica).</summary>
    public static V1Deployment Deployment(KubernetesApp app, KubernetesNames names, KubernetesManifestOptions options)
    {
        ArgumentNullException.ThrowIfNull(names);
        ArgumentNullException.ThrowIfNull(options);
        var container = new V1Container
        {
            Name = "controller",
            Image = options.ControllerImage,
            ImagePullPolicy = "IfNotPresent",
            Args = Args(app, options),
            Env =
            [
                HostPods.SecretEnv(FunctionAppLoader.StorageSetting, names.SettingsSecret),
                // /scale/status needs the app's master key: the same keys Secret as the hosts'.
                new V1EnvVar { Name = "AzureWebJobsSecretStorageType", Value = "kubernetes" },
            ],
            VolumeMounts = [new V1VolumeMount { Name = "keys", MountPath = KubernetesNames.KeysMountPath, ReadOnlyProperty = true }],
            Ports =
            [
                new V1ContainerPort { ContainerPort = KubernetesNames.ControllerHttpPort, Name = "http", Protocol = "TCP" },
                new V1ContainerPort { ContainerPort = KubernetesNames.ControllerGrpcPort, Name = "grpc", Protocol = "TCP" },
            ],
            ReadinessProbe = new V1Probe { TcpSocket = new V1TCPSocketAction { Port = "http" }, PeriodSeconds = 5 },
            Resources = new V1ResourceRequirements
            {
                Requests = new Dictionary<string, ResourceQuantity> { ["cpu"] = new("250m"), ["memory"] = new("256Mi") },
                Limits = new Dictionary<string, ResourceQuantity> { ["memory"] = new("512Mi") },
            },
        };
        return new V1Deployment
        {
            ApiVersion = "apps/v1",
            Kind = "Deployment",
            Metadata = names.Metadata(names.Controller, selectable: true),
            Spec = new V1DeploymentSpec
            {
                Replicas = 1,
                Selector = new V1LabelSelector { MatchLabels = KubernetesNames.Selector(names.Controller) },
                Template = new V1PodTemplateSpec
                {
                    Metadata = new V1ObjectMeta { Labels = KubernetesNames.Labels(names.Controller) },
                    Spec = new V1PodSpec
                    {
                        Containers = [container],
                        Volumes = [new V1Volume { Name = "keys", Secret = new V1SecretVolumeSource { SecretName = names.KeysSecret } }],
                    },
                },
            },
        };
    }

    /// <summary>KEDA's scalerAddress and the hosts' urgent votes (gRPC, plain HTTP/2), and /scale/status over HTTP.</summary>
    public static V1Service Service(KubernetesNames names)
    {
        ArgumentNullException.ThrowIfNull(names);
        return names.ClusterIpService(
            names.Controller,
            new V1ServicePort { Name = "grpc", Port = KubernetesNames.ControllerGrpcPort, TargetPort = "grpc", Protocol = "TCP", AppProtocol = "kubernetes.io/h2c" },
            new V1ServicePort { Name = "http", Port = 80, TargetPort = "http", Protocol = "TCP" });
    }

    private static string Invariant(int value) => value.ToString(CultureInfo.InvariantCulture);
}
