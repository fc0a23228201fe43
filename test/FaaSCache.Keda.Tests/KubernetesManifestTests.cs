using System.CommandLine;
using System.Text.RegularExpressions;
using FaaSCache.Host;
using FaaSCache.Host.Start;
using FaaSCache.ScaleController.Options;
using k8s.Models;
using YamlDotNet.Serialization;

namespace FaaSCache.Keda.Tests;

/// <summary>
/// deploy/kubernetes, checked without a cluster: every object loads with the KubernetesClient library's models (KEDA's
/// ScaledObject with its own), and the objects name each other consistently (selectors, ports, addresses, the app).
/// </summary>
[Trait("Category", "Unit")]
public sealed partial class KubernetesManifestTests
{
    private const string Namespace = "faascache";
    private const string HostDeployment = "faascache-host";
    private const string ControllerDeployment = "faascache-controller";
    private const string ControllerService = "faascache-controller";

    private readonly KubernetesManifests _manifests = KubernetesManifests.Load();

    [Fact]
    public void Every_manifest_loads_and_the_kustomization_lists_exactly_them()
    {
        Assert.All(_manifests.ByFile, file => Assert.NotEmpty(file.Value));
        var kustomization = new DeserializerBuilder().IgnoreUnmatchedProperties().Build()
            .Deserialize<Dictionary<string, object>>(File.ReadAllText(Path.Combine(_manifests.Directory, "kustomization.yaml")));
        IEnumerable<string> resources = ((List<object>)kustomization["resources"]).Cast<string>();

        Assert.Equal(_manifests.ByFile.Keys.Order(StringComparer.Ordinal), resources.Order(StringComparer.Ordinal));
    }

    [Fact]
    public void Every_object_lives_in_the_namespace_the_manifests_create()
    {
        V1Namespace ns = _manifests.Single<V1Namespace>(Namespace);

        Assert.All(_manifests.All.OfType<k8s.IKubernetesObject<V1ObjectMeta>>().Where(o => o is not V1Namespace), o => Assert.Equal(ns.Metadata.Name, o.Metadata.NamespaceProperty));
    }

    [Fact]
    public void Each_deployment_selects_its_own_pods()
    {
        Assert.All(_manifests.All.OfType<V1Deployment>(), d =>
            Assert.All(d.Spec.Selector.MatchLabels, label => Assert.Equal(label.Value, d.Spec.Template.Metadata.Labels[label.Key])));
    }

    [Fact]
    public void Every_mount_names_a_volume_of_its_pod_and_every_config_map_key_it_projects_exists()
    {
        Assert.All(_manifests.All.OfType<V1Deployment>(), d =>
        {
            V1PodSpec pod = d.Spec.Template.Spec;
            Assert.All(pod.Containers.SelectMany(c => c.VolumeMounts ?? []), m => Assert.Contains(pod.Volumes, v => v.Name == m.Name));
            Assert.All((pod.Volumes ?? []).Where(v => v.ConfigMap is not null), v =>
            {
                V1ConfigMap map = _manifests.Single<V1ConfigMap>(v.ConfigMap.Name);
                Assert.All(v.ConfigMap.Items, item => Assert.Contains(item.Key, map.Data.Keys));
            });
        });
    }

    [Fact]
    public void The_controller_service_selects_the_controller_pods_and_targets_ports_they_declare()
    {
        V1Service service = _manifests.Single<V1Service>(ControllerService);
        V1Deployment controller = _manifests.Single<V1Deployment>(ControllerDeployment);

        Assert.All(service.Spec.Selector, label => Assert.Equal(label.Value, controller.Spec.Template.Metadata.Labels[label.Key]));
        Assert.DoesNotContain(_manifests.All.OfType<V1Deployment>().Where(d => d != controller), d => service.Spec.Selector.All(l => d.Spec.Template.Metadata.Labels.TryGetValue(l.Key, out string? v) && v == l.Value));
        IList<V1ContainerPort> declared = Assert.Single(controller.Spec.Template.Spec.Containers).Ports;
        Assert.All(service.Spec.Ports, port => Assert.Contains(declared, p => p.Name == port.TargetPort.Value));
        Assert.Contains(service.Spec.Ports, p => p.Name == "grpc" && p.AppProtocol == "kubernetes.io/h2c");
        IList<string> args = Assert.Single(controller.Spec.Template.Spec.Containers).Args;
        Assert.Equal(Port(controller.Spec.Template.Spec.Containers[0], "grpc").ToString(System.Globalization.CultureInfo.InvariantCulture), args[args.IndexOf("--grpc-port") + 1]);
        Assert.Equal(Port(controller.Spec.Template.Spec.Containers[0], "http").ToString(System.Globalization.CultureInfo.InvariantCulture), args[args.IndexOf("--port") + 1]);
    }

    [Fact]
    public void The_scaled_object_scales_the_host_deployment_through_the_controllers_grpc_port()
    {
        KedaScaledObject scaled = Assert.Single(_manifests.All.OfType<KedaScaledObject>());
        V1Service service = _manifests.Single<V1Service>(ControllerService);
        V1Deployment controller = _manifests.Single<V1Deployment>(ControllerDeployment);

        Assert.Equal(("apps/v1", "Deployment", HostDeployment), (scaled.Spec.ScaleTargetRef.ApiVersion, scaled.Spec.ScaleTargetRef.Kind, scaled.Spec.ScaleTargetRef.Name));
        _ = _manifests.Single<V1Deployment>(scaled.Spec.ScaleTargetRef.Name);
        KedaTrigger trigger = Assert.Single(scaled.Spec.Triggers);
        Assert.Equal("external", trigger.Type);
        Assert.Equal("AverageValue", trigger.MetricType);

        // KEDA runs in its own namespace: the address must be the Service's full name and one of its ports.
        Match address = ScalerAddress().Match(trigger.Metadata["scalerAddress"]);
        Assert.True(address.Success, $"scalerAddress '{trigger.Metadata["scalerAddress"]}' is not <service>.<namespace>.svc.cluster.local:<port>");
        Assert.Equal((service.Metadata.Name, service.Metadata.NamespaceProperty), (address.Groups["service"].Value, address.Groups["namespace"].Value));
        V1ServicePort port = Assert.Single(service.Spec.Ports, p => p.Port == int.Parse(address.Groups["port"].Value, System.Globalization.CultureInfo.InvariantCulture));
        V1ContainerPort target = Assert.Single(Assert.Single(controller.Spec.Template.Spec.Containers).Ports, p => p.Name == port.TargetPort.Value);
        Assert.Equal("grpc", target.Name);
    }

    [Fact]
    public void The_trigger_metadata_is_what_the_scaler_accepts_for_the_app_the_hosts_run()
    {
        KedaTrigger trigger = Assert.Single(Assert.Single(_manifests.All.OfType<KedaScaledObject>()).Spec.Triggers);
        var reference = new ScaledObjectRef { Name = "faascache-host", Namespace = Namespace };
        reference.ScalerMetadata.Add(trigger.Metadata);

        KedaScalerMetadata metadata = KedaScalerMetadata.Parse(reference);

        Assert.Equal(HostSettings().AppName, metadata.App);
        Assert.Equal(1, metadata.TargetValue);
        IList<string> controllerArgs = Assert.Single(_manifests.Single<V1Deployment>(ControllerDeployment).Spec.Template.Spec.Containers).Args;
        Assert.Equal(metadata.App, controllerArgs[controllerArgs.IndexOf("--app-name") + 1]);
        Assert.Equal("membership", controllerArgs[controllerArgs.IndexOf("--instances") + 1]);
    }

    [Fact]
    public void The_controller_args_parse_with_its_own_command_line_as_a_membership_mode_controller_within_the_scaled_objects_bounds()
    {
        IList<string> args = Assert.Single(_manifests.Single<V1Deployment>(ControllerDeployment).Spec.Template.Spec.Containers).Args;
        ScaleControllerOptions? parsed = null;
        ParseResult result = ScaleControllerCommandLine.Create((o, _, _) =>
        {
            parsed = o;
            return Task.FromResult(0);
        }).Parse([.. args]);
        Assert.Empty(result.Errors);
        Assert.Equal(0, result.Invoke());
        ScaleControllerOptions options = parsed!;
        options.StorageConnection = "UseDevelopmentStorage=true"; // the pod's $AzureWebJobsStorage, from the Secret

        Assert.False(new ScaleControllerOptionsValidator().Validate(null, options).Failed, string.Join("; ", new ScaleControllerOptionsValidator().Validate(null, options).Failures ?? []));
        Assert.Equal(InstanceSourceMode.Membership, options.Instances);
        Assert.Equal(HostSettings().AppName, options.AppName);
        KedaScaledObjectSpec spec = Assert.Single(_manifests.All.OfType<KedaScaledObject>()).Spec;
        Assert.Equal(spec.IdleReplicaCount, options.MinInstances);
        Assert.Equal(spec.MaxReplicaCount, options.MaxInstances);
    }

    [Fact]
    public void The_replica_bounds_are_ones_keda_accepts_with_scale_to_zero_when_idle()
    {
        KedaScaledObjectSpec spec = Assert.Single(_manifests.All.OfType<KedaScaledObject>()).Spec;

        var limits = new KedaReplicaLimits(spec.MinReplicaCount!.Value, spec.MaxReplicaCount!.Value, spec.IdleReplicaCount);

        Assert.Equal(0, limits.IdleReplicaCount);
        Assert.Equal(0, KedaReplicaMath.SettledReplicas(0, 1, isActive: false, currentReplicas: limits.MaxReplicaCount, limits));
        Assert.Null(_manifests.Single<V1Deployment>(HostDeployment).Spec.Replicas);
    }

    [Fact]
    public void The_host_command_line_parses_with_the_hosts_own_options_and_uses_the_declared_ports()
    {
        V1Container host = HostContainer();
        HostSettings settings = HostSettings();

        Assert.Equal(Port(host, "http"), settings.Port);
        Assert.Equal(Port(host, "peer"), settings.PeerPort);
        Assert.Equal(PodIp, settings.PeerAddress.ToString());
        Assert.Equal(PodIp, settings.ListenAddress.ToString());
        Assert.True(settings.CacheEnabled && settings.Membership);
        Assert.Equal("status.podIP", host.Env.Single(e => e.Name == "POD_IP").ValueFrom.FieldRef.FieldPath);
    }

    [Fact]
    public void Urgent_votes_go_to_the_controller_services_grpc_port()
    {
        V1Service service = _manifests.Single<V1Service>(ControllerService);
        Uri controller = HostSettings().ScaleController!;

        Assert.Equal($"{service.Metadata.Name}.{service.Metadata.NamespaceProperty}.svc.cluster.local", controller.Host);
        Assert.Equal("grpc", Assert.Single(service.Spec.Ports, p => p.Port == controller.Port).Name);
    }

    [Fact]
    public void The_host_is_ready_when_its_workers_have_loaded_alive_while_it_pings_and_reads_storage_and_its_keys_from_secrets()
    {
        V1Container host = HostContainer();
        V1PodSpec pod = _manifests.Single<V1Deployment>(HostDeployment).Spec.Template.Spec;

        // The admin routes need the master key (docs/security.md); the ping is the Functions host's open probe.
        Assert.Equal(("/admin/host/ready", "http"), (host.ReadinessProbe.HttpGet.Path, host.ReadinessProbe.HttpGet.Port.Value));
        Assert.Equal(("/admin/host/ping", "http"), (host.LivenessProbe.HttpGet.Path, host.LivenessProbe.HttpGet.Port.Value));
        Assert.Equal("kubernetes", host.Env.Single(e => e.Name == "AzureWebJobsSecretStorageType").Value);
        V1VolumeMount keys = host.VolumeMounts.Single(m => m.MountPath == "/run/secrets/functions-keys");
        Assert.Equal("faascache-keys", pod.Volumes.Single(v => v.Name == keys.Name).Secret.SecretName);
        Assert.DoesNotContain(host.Args, a => a == "--auth");
        V1SecretKeySelector secret = host.Env.Single(e => e.Name == "AzureWebJobsStorage").ValueFrom.SecretKeyRef;
        Assert.Equal(("faascache-storage", "AzureWebJobsStorage"), (secret.Name, secret.Key));
        V1SecretKeySelector controllerSecret = Assert.Single(_manifests.Single<V1Deployment>(ControllerDeployment).Spec.Template.Spec.Containers)
            .Env.Single(e => e.Name == "AzureWebJobsStorage").ValueFrom.SecretKeyRef;
        Assert.Equal((secret.Name, secret.Key), (controllerSecret.Name, controllerSecret.Key));
    }

    [Fact]
    public void The_app_mounted_at_the_script_root_is_the_sample_file_for_file()
    {
        V1PodSpec pod = _manifests.Single<V1Deployment>(HostDeployment).Spec.Template.Spec;
        V1VolumeMount mount = Assert.Single(HostContainer().VolumeMounts, m => m.Name == "app");
        V1ConfigMapVolumeSource source = Assert.Single(pod.Volumes, v => v.Name == mount.Name).ConfigMap;
        V1ConfigMap app = _manifests.Single<V1ConfigMap>(source.Name);
        string sample = Path.Combine(FaaSCache.Testing.RepositoryRoot.Find(), "samples", "thumbnail-node");
        string[] ignored = File.ReadAllLines(Path.Combine(sample, ".funcignore")).Where(l => l.Length > 0).ToArray();
        IEnumerable<string> sampleFiles = Directory.EnumerateFiles(sample, "*", SearchOption.AllDirectories)
            .Select(f => Path.GetRelativePath(sample, f)).Where(f => !ignored.Contains(f));

        Assert.Equal(Path.GetFullPath(mount.MountPath), HostSettings().ScriptRoot);
        Assert.Equal(app.Data.Keys.Order(StringComparer.Ordinal), source.Items.Select(i => i.Key).Order(StringComparer.Ordinal));
        Assert.Equal(sampleFiles.Order(StringComparer.Ordinal), source.Items.Select(i => i.Path).Order(StringComparer.Ordinal));
        Assert.All(source.Items, item => Assert.Equal(File.ReadAllText(Path.Combine(sample, item.Path)), app.Data[item.Key]));
    }

    private const string PodIp = "10.244.1.7";

    private V1Container HostContainer() => Assert.Single(_manifests.Single<V1Deployment>(HostDeployment).Spec.Template.Spec.Containers);

    // The host's args as the kubelet expands them ($(VAR) from the container's env), parsed by the host's own parser.
    private HostSettings HostSettings()
    {
        V1Container host = HostContainer();
        var values = new Dictionary<string, string> { ["POD_IP"] = PodIp, ["POD_NAME"] = "faascache-host-7d9f-abcde" };
        Assert.All(host.Env.Where(e => e.ValueFrom?.FieldRef is not null), e => Assert.Contains(e.Name, values.Keys));
        string[] args = [.. host.Args.Select(a => KubeletVariable().Replace(a, m => values[m.Groups[1].Value]))];
        Assert.Equal("start", args[0]);
        return StartCommandLine.Parse(args[1..]);
    }

    private static int Port(V1Container container, string name) => Assert.Single(container.Ports, p => p.Name == name).ContainerPort;

    [GeneratedRegex(@"^(?<service>[a-z0-9-]+)\.(?<namespace>[a-z0-9-]+)\.svc\.cluster\.local:(?<port>[0-9]+)$", RegexOptions.CultureInvariant)]
    private static partial Regex ScalerAddress();

    [GeneratedRegex(@"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", RegexOptions.CultureInvariant)]
    private static partial Regex KubeletVariable();
}
