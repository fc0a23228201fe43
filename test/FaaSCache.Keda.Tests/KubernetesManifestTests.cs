using System.CommandLine;
using System.Text.RegularExpressions;
using FaaSCache.Host;
using FaaSCache.Host.Start;
using FaaSCache.ScaleController.Options;
using k8s.Models;
using YamlDotNet.Serialization;

namespace FaaSCache.Keda.Tests;

/// <summary>
/// deploy/kubernetes and <c>faascache kubernetes manifests</c>' output for a sample of each programming model, checked
/// without a cluster: every object loads with the KubernetesClient library's models (KEDA's ScaledObject with its own),
/// and the objects name each other consistently (selectors, ports, Secrets, addresses, the app); the host's and the
/// controller's args parse with their own command lines.
/// </summary>
[Trait("Category", "Unit")]
public sealed partial class KubernetesManifestTests
{
    public static TheoryData<string> Sources => KubernetesManifests.Sources;

    [Fact]
    public void Every_manifest_loads_and_the_kustomization_lists_exactly_them()
    {
        KubernetesManifests manifests = KubernetesManifests.Load();
        Assert.All(manifests.ByFile, file => Assert.NotEmpty(file.Value));
        var kustomization = new DeserializerBuilder().IgnoreUnmatchedProperties().Build()
            .Deserialize<Dictionary<string, object>>(File.ReadAllText(Path.Combine(manifests.Directory, "kustomization.yaml")));
        IEnumerable<string> resources = ((List<object>)kustomization["resources"]).Cast<string>();

        Assert.Equal(manifests.ByFile.Keys.Order(StringComparer.Ordinal), resources.Order(StringComparer.Ordinal));
        Assert.Equal(manifests.Namespace, manifests.Single<V1Namespace>(manifests.Namespace).Metadata.Name);
    }

    [Theory]
    [MemberData(nameof(Sources))]
    public void Every_object_lives_in_the_apps_namespace(string source)
    {
        KubernetesManifests manifests = KubernetesManifests.Of(source);

        Assert.All(manifests.All.OfType<k8s.IKubernetesObject<V1ObjectMeta>>().Where(o => o is not V1Namespace), o => Assert.Equal(manifests.Namespace, o.Metadata.NamespaceProperty));
        Assert.All(manifests.All.OfType<KedaScaledObject>(), o => Assert.Equal(manifests.Namespace, o.Metadata.NamespaceProperty));
    }

    [Theory]
    [MemberData(nameof(Sources))]
    public void The_objects_are_named_after_the_app_as_the_scripts_expect(string source)
    {
        KubernetesManifests manifests = KubernetesManifests.Of(source);
        string app = manifests.App;

        // scripts/pods.sh relies on these names.
        _ = manifests.Single<V1Deployment>(app);
        _ = manifests.Single<V1Service>(app);
        _ = manifests.Single<V1Deployment>($"{app}-controller");
        _ = manifests.Single<V1Service>($"{app}-controller");
        Assert.Equal(app, Assert.Single(manifests.All.OfType<KedaScaledObject>()).Metadata.Name);
        Assert.Equal(("host", "controller"), (HostContainer(manifests).Name, ControllerContainer(manifests).Name));
    }

    [Theory]
    [MemberData(nameof(Sources))]
    public void Each_deployment_selects_its_own_pods_and_each_service_selects_only_its_deployments(string source)
    {
        KubernetesManifests manifests = KubernetesManifests.Of(source);
        V1Deployment[] deployments = [.. manifests.All.OfType<V1Deployment>()];

        Assert.All(deployments, d =>
            Assert.All(d.Spec.Selector.MatchLabels, label => Assert.Equal(label.Value, d.Spec.Template.Metadata.Labels[label.Key])));
        Assert.All(manifests.All.OfType<V1Service>(), service =>
        {
            V1Deployment selected = Assert.Single(deployments, d => service.Spec.Selector.All(l => d.Spec.Template.Metadata.Labels.TryGetValue(l.Key, out string? v) && v == l.Value));
            Assert.Equal(service.Metadata.Name, selected.Metadata.Name);
            IList<V1ContainerPort> declared = Assert.Single(selected.Spec.Template.Spec.Containers).Ports;
            Assert.All(service.Spec.Ports, port => Assert.Contains(declared, p => p.Name == port.TargetPort.Value));
        });
    }

    [Theory]
    [MemberData(nameof(Sources))]
    public void Every_mount_names_a_volume_of_its_pod_and_every_secret_it_uses_is_the_apps(string source)
    {
        KubernetesManifests manifests = KubernetesManifests.Of(source);
        string[] secrets = [$"{manifests.App}-settings", $"{manifests.App}-keys"];

        Assert.All(manifests.All.OfType<V1Deployment>(), d =>
        {
            V1PodSpec pod = d.Spec.Template.Spec;
            Assert.All(pod.Containers.SelectMany(c => c.VolumeMounts ?? []), m => Assert.Contains(pod.Volumes, v => v.Name == m.Name));
            Assert.All(pod.Volumes.Where(v => v.Secret is not null), v => Assert.Contains(v.Secret.SecretName, secrets));
            Assert.All(pod.Containers.SelectMany(c => c.Env).Where(e => e.ValueFrom?.SecretKeyRef is not null), e => Assert.Contains(e.ValueFrom.SecretKeyRef.Name, secrets));
            Assert.All(pod.Containers, c => Assert.Null(c.EnvFrom));
        });
        // With the Secrets in the output, every key the pods read is in them.
        Assert.All(manifests.All.OfType<V1Secret>(), s => Assert.Contains(s.Metadata.Name, secrets));
        if (manifests.All.OfType<V1Secret>().Any())
        {
            Assert.All(manifests.All.OfType<V1Deployment>().SelectMany(d => d.Spec.Template.Spec.Containers).SelectMany(c => c.Env).Select(e => e.ValueFrom?.SecretKeyRef).OfType<V1SecretKeySelector>(), key =>
                Assert.Contains(key.Key, manifests.Single<V1Secret>(key.Name).StringData.Keys));
        }
    }

    [Theory]
    [MemberData(nameof(Sources))]
    public void The_controller_service_targets_the_ports_the_controller_listens_on(string source)
    {
        KubernetesManifests manifests = KubernetesManifests.Of(source);
        V1Service service = manifests.Single<V1Service>($"{manifests.App}-controller");
        V1Container controller = ControllerContainer(manifests);

        Assert.Contains(service.Spec.Ports, p => p.Name == "grpc" && p.AppProtocol == "kubernetes.io/h2c");
        Assert.Contains(service.Spec.Ports, p => p.Name == "http" && p.Port == 80);
        IList<string> args = controller.Args;
        Assert.Equal(Port(controller, "grpc").ToString(CultureInfo.InvariantCulture), args[args.IndexOf("--grpc-port") + 1]);
        Assert.Equal(Port(controller, "http").ToString(CultureInfo.InvariantCulture), args[args.IndexOf("--port") + 1]);
    }

    [Theory]
    [MemberData(nameof(Sources))]
    public void The_scaled_object_scales_the_host_deployment_through_the_controllers_grpc_port(string source)
    {
        KubernetesManifests manifests = KubernetesManifests.Of(source);
        KedaScaledObject scaled = Assert.Single(manifests.All.OfType<KedaScaledObject>());
        V1Service service = manifests.Single<V1Service>($"{manifests.App}-controller");
        V1Container controller = ControllerContainer(manifests);

        Assert.Equal(("apps/v1", "Deployment", manifests.App), (scaled.Spec.ScaleTargetRef.ApiVersion, scaled.Spec.ScaleTargetRef.Kind, scaled.Spec.ScaleTargetRef.Name));
        KedaTrigger trigger = Assert.Single(scaled.Spec.Triggers);
        Assert.Equal("external", trigger.Type);
        Assert.Equal("AverageValue", trigger.MetricType);
        Assert.Equal((5, 60), (scaled.Spec.PollingInterval, scaled.Spec.CooldownPeriod));

        // KEDA runs in its own namespace: the address must be the Service's full name and one of its ports.
        Match address = ScalerAddress().Match(trigger.Metadata["scalerAddress"]);
        Assert.True(address.Success, $"scalerAddress '{trigger.Metadata["scalerAddress"]}' is not <service>.<namespace>.svc.cluster.local:<port>");
        Assert.Equal((service.Metadata.Name, service.Metadata.NamespaceProperty), (address.Groups["service"].Value, address.Groups["namespace"].Value));
        V1ServicePort port = Assert.Single(service.Spec.Ports, p => p.Port == int.Parse(address.Groups["port"].Value, CultureInfo.InvariantCulture));
        Assert.Equal("grpc", Assert.Single(controller.Ports, p => p.Name == port.TargetPort.Value).Name);
    }

    [Theory]
    [MemberData(nameof(Sources))]
    public void The_trigger_metadata_is_what_the_scaler_accepts_for_the_app_the_hosts_run(string source)
    {
        KubernetesManifests manifests = KubernetesManifests.Of(source);
        KedaTrigger trigger = Assert.Single(Assert.Single(manifests.All.OfType<KedaScaledObject>()).Spec.Triggers);
        var reference = new ScaledObjectRef { Name = manifests.App, Namespace = manifests.Namespace };
        reference.ScalerMetadata.Add(trigger.Metadata);

        KedaScalerMetadata metadata = KedaScalerMetadata.Parse(reference);

        Assert.Equal(HostSettings(manifests).AppName, metadata.App);
        Assert.Equal(1, metadata.TargetValue);
        IList<string> controllerArgs = ControllerContainer(manifests).Args;
        Assert.Equal(metadata.App, controllerArgs[controllerArgs.IndexOf("--app-name") + 1]);
        Assert.Equal("membership", controllerArgs[controllerArgs.IndexOf("--instances") + 1]);
    }

    [Theory]
    [MemberData(nameof(Sources))]
    public void The_controller_args_parse_with_its_own_command_line_as_a_membership_mode_controller_within_the_scaled_objects_bounds(string source)
    {
        KubernetesManifests manifests = KubernetesManifests.Of(source);
        IList<string> args = ControllerContainer(manifests).Args;
        ScaleControllerOptions? parsed = null;
        // Strict: --member-http-port (the front door routing /api/* to the members' HTTP port) must be an option the
        // controller has.
        Command commandLine = ScaleControllerCommandLine.Create((o, _, _) =>
        {
            parsed = o;
            return Task.FromResult(0);
        });
        ParseResult result = commandLine.Parse([.. args]);
        Assert.Empty(result.Errors);
        Assert.Equal(0, result.Invoke());
        ScaleControllerOptions options = parsed!;
        options.StorageConnection = "UseDevelopmentStorage=true"; // the pod's $AzureWebJobsStorage, from the Secret

        Assert.False(new ScaleControllerOptionsValidator().Validate(null, options).Failed, string.Join("; ", new ScaleControllerOptionsValidator().Validate(null, options).Failures ?? []));
        Assert.Equal(InstanceSourceMode.Membership, options.Instances);
        Assert.Equal(HostSettings(manifests).AppName, options.AppName);
        KedaScaledObjectSpec spec = Assert.Single(manifests.All.OfType<KedaScaledObject>()).Spec;
        Assert.Equal(spec.IdleReplicaCount, options.MinInstances);
        Assert.Equal(spec.MaxReplicaCount, options.MaxInstances);
        Assert.Equal(Port(HostContainer(manifests), "http").ToString(CultureInfo.InvariantCulture), args[args.IndexOf("--member-http-port") + 1]);
    }

    [Theory]
    [MemberData(nameof(Sources))]
    public void The_replica_bounds_are_ones_keda_accepts_with_scale_to_zero_when_idle(string source)
    {
        KubernetesManifests manifests = KubernetesManifests.Of(source);
        KedaScaledObjectSpec spec = Assert.Single(manifests.All.OfType<KedaScaledObject>()).Spec;

        var limits = new KedaReplicaLimits(spec.MinReplicaCount!.Value, spec.MaxReplicaCount!.Value, spec.IdleReplicaCount);

        Assert.Equal(0, limits.IdleReplicaCount);
        Assert.Equal(0, KedaReplicaMath.SettledReplicas(0, 1, isActive: false, currentReplicas: limits.MaxReplicaCount, limits));
        Assert.InRange(manifests.Single<V1Deployment>(manifests.App).Spec.Replicas!.Value, 0, limits.MaxReplicaCount);
        Assert.Equal(1, manifests.Single<V1Deployment>($"{manifests.App}-controller").Spec.Replicas);
    }

    [Theory]
    [MemberData(nameof(Sources))]
    public void The_host_command_line_parses_with_the_hosts_own_options_and_uses_the_declared_ports(string source)
    {
        KubernetesManifests manifests = KubernetesManifests.Of(source);
        V1Container host = HostContainer(manifests);
        HostSettings settings = HostSettings(manifests);

        Assert.Equal(Port(host, "http"), settings.Port);
        Assert.Equal(Port(host, "peer"), settings.PeerPort);
        Assert.Equal(PodIp, settings.PeerAddress.ToString());
        Assert.Equal(PodIp, settings.ListenAddress.ToString());
        Assert.True(settings.CacheEnabled && settings.Membership);
        Assert.Equal(manifests.App, settings.AppName);
        Assert.Equal("/home/site/wwwroot", settings.ScriptRoot);
        Assert.Equal("status.podIP", host.Env.Single(e => e.Name == "POD_IP").ValueFrom.FieldRef.FieldPath);
        Assert.Equal("metadata.name", host.Env.Single(e => e.Name == "POD_NAME").ValueFrom.FieldRef.FieldPath);
    }

    [Theory]
    [MemberData(nameof(Sources))]
    public void Urgent_votes_go_to_the_controller_services_grpc_port(string source)
    {
        KubernetesManifests manifests = KubernetesManifests.Of(source);
        V1Service service = manifests.Single<V1Service>($"{manifests.App}-controller");
        Uri controller = HostSettings(manifests).ScaleController!;

        Assert.Equal($"{service.Metadata.Name}.{service.Metadata.NamespaceProperty}.svc.cluster.local", controller.Host);
        Assert.Equal("grpc", Assert.Single(service.Spec.Ports, p => p.Port == controller.Port).Name);
    }

    [Theory]
    [MemberData(nameof(Sources))]
    public void The_host_is_ready_when_its_workers_have_loaded_alive_while_it_pings_and_reads_storage_and_its_keys_from_secrets(string source)
    {
        KubernetesManifests manifests = KubernetesManifests.Of(source);
        V1Container host = HostContainer(manifests);
        V1PodSpec pod = manifests.Single<V1Deployment>(manifests.App).Spec.Template.Spec;

        // The admin routes need the master key (docs/security.md); the ping is the Functions host's open probe.
        Assert.Equal(("/admin/host/ready", "http", 2, 3), (host.ReadinessProbe.HttpGet.Path, host.ReadinessProbe.HttpGet.Port.Value, host.ReadinessProbe.PeriodSeconds, host.ReadinessProbe.FailureThreshold));
        Assert.Equal(("/admin/host/ping", "http", 10, 10), (host.LivenessProbe.HttpGet.Path, host.LivenessProbe.HttpGet.Port.Value, host.LivenessProbe.InitialDelaySeconds, host.LivenessProbe.PeriodSeconds));
        Assert.Equal(30, pod.TerminationGracePeriodSeconds);
        Assert.Equal("kubernetes", host.Env.Single(e => e.Name == "AzureWebJobsSecretStorageType").Value);
        V1VolumeMount keys = host.VolumeMounts.Single(m => m.MountPath == "/run/secrets/functions-keys");
        Assert.True(keys.ReadOnlyProperty);
        Assert.Equal($"{manifests.App}-keys", pod.Volumes.Single(v => v.Name == keys.Name).Secret.SecretName);
        Assert.DoesNotContain(host.Args, a => a == "--auth");
        V1SecretKeySelector secret = host.Env.Single(e => e.Name == "AzureWebJobsStorage").ValueFrom.SecretKeyRef;
        Assert.Equal(($"{manifests.App}-settings", "AzureWebJobsStorage"), (secret.Name, secret.Key));
        V1Container controller = ControllerContainer(manifests);
        V1SecretKeySelector controllerSecret = controller.Env.Single(e => e.Name == "AzureWebJobsStorage").ValueFrom.SecretKeyRef;
        Assert.Equal((secret.Name, secret.Key), (controllerSecret.Name, controllerSecret.Key));
        Assert.Equal("kubernetes", controller.Env.Single(e => e.Name == "AzureWebJobsSecretStorageType").Value);
        Assert.Equal(keys.MountPath, Assert.Single(controller.VolumeMounts).MountPath);
    }

    [Theory]
    [MemberData(nameof(Sources))]
    public void The_app_is_inside_the_image_and_shared_memory_is_a_memory_volume_within_the_containers_limit(string source)
    {
        KubernetesManifests manifests = KubernetesManifests.Of(source);
        V1Container host = HostContainer(manifests);
        V1PodSpec pod = manifests.Single<V1Deployment>(manifests.App).Spec.Template.Spec;
        V1VolumeMount shm = Assert.Single(host.VolumeMounts, m => m.MountPath == "/dev/shm");
        V1EmptyDirVolumeSource emptyDir = pod.Volumes.Single(v => v.Name == shm.Name).EmptyDir;

        Assert.Equal(["keys", "shm"], pod.Volumes.Select(v => v.Name).Order(StringComparer.Ordinal));
        Assert.Equal("Memory", emptyDir.Medium);
        Assert.Equal(emptyDir.SizeLimit.ToInt64() + (512L << 20), host.Resources.Limits["memory"].ToInt64());
        Assert.Equal((500, 512L << 20), ((int)(host.Resources.Requests["cpu"].ToDecimal() * 1000), host.Resources.Requests["memory"].ToInt64()));
        Assert.Equal("IfNotPresent", host.ImagePullPolicy);
    }

    private const string PodIp = "10.244.1.7";

    private static V1Container HostContainer(KubernetesManifests manifests) => Assert.Single(manifests.Single<V1Deployment>(manifests.App).Spec.Template.Spec.Containers);

    private static V1Container ControllerContainer(KubernetesManifests manifests) => Assert.Single(manifests.Single<V1Deployment>($"{manifests.App}-controller").Spec.Template.Spec.Containers);

    // The host's args as the kubelet expands them ($(VAR) from the container's env), parsed by the host's own parser.
    private static HostSettings HostSettings(KubernetesManifests manifests)
    {
        V1Container host = HostContainer(manifests);
        var values = new Dictionary<string, string> { ["POD_IP"] = PodIp, ["POD_NAME"] = $"{manifests.App}-7d9f-abcde" };
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
