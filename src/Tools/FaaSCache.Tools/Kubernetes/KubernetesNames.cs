namespace FaaSCache.Tools.Kubernetes;

/// <summary>
/// The one home of how an app's objects name each other: the Secrets, the Services and their full names, the ports, the
/// labels. scripts/pods.sh relies on these names too.
/// </summary>
public sealed record KubernetesNames(string App, string Namespace)
{
    /// <summary>The host's HTTP port (triggers, admin), Core Tools' default.</summary>
    public const int HostHttpPort = 7071;

    /// <summary>The host's peer (cachelet-to-cachelet) gRPC port.</summary>
    public const int HostPeerPort = 7072;

    /// <summary>The controller's HTTP port (/scale/status, the front door).</summary>
    public const int ControllerHttpPort = 8080;

    /// <summary>The controller's gRPC port (KEDA's external scaler, the hosts' urgent votes).</summary>
    public const int ControllerGrpcPort = 8081;

    /// <summary>Where the Functions host reads a mounted keys Secret (the host's own constant).</summary>
    public const string KeysMountPath = FaaSCache.Security.Keys.MountedSecretKeyStore.DefaultDirectory;

    /// <summary>Where an app image has the app (the Functions images' layout).</summary>
    public const string ScriptRoot = "/home/site/wwwroot";

    /// <summary>The label every object carries.</summary>
    public const string PartOf = "faascache";

    /// <summary>Gets the Secret of the app settings.</summary>
    public string SettingsSecret => $"{App}-settings";

    /// <summary>Gets the Secret of the host keys.</summary>
    public string KeysSecret => $"{App}-keys";

    /// <summary>Gets the host Deployment, its Service and the ScaledObject.</summary>
    public string Hosts => App;

    /// <summary>Gets the controller's Deployment and Service.</summary>
    public string Controller => $"{App}-controller";

    /// <summary>Gets the controller Service's full name, as pods and KEDA (in its own namespace) reach it.</summary>
    public string ControllerHost => $"{Controller}.{Namespace}.svc.cluster.local";

    /// <summary>The metadata of an object named <paramref name="name"/>: in the namespace, labelled as FaaSCache's.</summary>
    public V1ObjectMeta Metadata(string name, bool selectable = false) => new()
    {
        Name = name,
        NamespaceProperty = Namespace,
        Labels = selectable ? Labels(name) : new Dictionary<string, string> { ["app.kubernetes.io/part-of"] = PartOf },
    };

    /// <summary>The labels of a Deployment's pods (the name one is what the selectors match).</summary>
    public static Dictionary<string, string> Labels(string name) => new()
    {
        ["app.kubernetes.io/name"] = name,
        ["app.kubernetes.io/part-of"] = PartOf,
    };

    /// <summary>The selector of the pods of <paramref name="name"/>.</summary>
    public static Dictionary<string, string> Selector(string name) => new() { ["app.kubernetes.io/name"] = name };

    /// <summary>A ClusterIP Service named <paramref name="name"/> in front of its pods, on <paramref name="ports"/>.</summary>
    public V1Service ClusterIpService(string name, params V1ServicePort[] ports) => new()
    {
        ApiVersion = "v1",
        Kind = "Service",
        Metadata = Metadata(name, selectable: true),
        Spec = new V1ServiceSpec { Type = "ClusterIP", Selector = Selector(name), Ports = ports },
    };
}
