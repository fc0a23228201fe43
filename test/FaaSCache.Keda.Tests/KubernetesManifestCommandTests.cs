using System.Text.Json.Nodes;
using System.Text.RegularExpressions;
using FaaSCache.Security.Keys;
using k8s.Models;

namespace FaaSCache.Keda.Tests;

/// <summary>
/// <c>faascache kubernetes manifests</c>, run in-process: deploy/kubernetes is its output for samples/thumbnail-node; for
/// every programming model it takes the runtime and settings from the app, sizes shared memory from host.json, makes keys
/// the host reads; every mistake is one message on stderr naming it, a non-zero exit code and nothing on stdout.
/// </summary>
[Trait("Category", "Unit")]
public sealed partial class KubernetesManifestCommandTests : IDisposable
{
    /// <summary>How deploy/kubernetes/thumbnail-node.yaml was made: its first lines, the command's output after them.</summary>
    public const string CommittedHeader =
        "# Made by `faascache kubernetes manifests` for samples/thumbnail-node (FaaSCache.Keda.Tests checks this file is its\n"
        + "# output below these two lines), with --no-secrets --namespace faascache --app-name thumbnail-node --image faascache-thumbnail-node:dev\n";

    private readonly DirectoryInfo _temp = Directory.CreateTempSubdirectory("faascache-k8s-");

    public void Dispose() => _temp.Delete(recursive: true);

    [Fact]
    public void The_committed_manifests_are_the_commands_output_for_the_thumbnail_node_sample()
    {
        string root = RepositoryRoot.Find();
        (int code, string output, string error) = KubernetesManifests.Run(
            "--script-root", Path.Combine(root, "samples", "thumbnail-node"), "--no-secrets", "--namespace", "faascache", "--app-name", "thumbnail-node", "--image", "faascache-thumbnail-node:dev");

        Assert.True(code == 0, error);
        Assert.Equal(CommittedHeader + output, File.ReadAllText(Path.Combine(root, "deploy", "kubernetes", "thumbnail-node.yaml")).ReplaceLineEndings("\n"));
    }

    [Theory]
    [InlineData("samples/amber-alert", "python")]
    [InlineData("samples/amber-alert-v2", "python")]
    [InlineData("samples/thumbnail-node", "node")]
    [InlineData("samples/thumbnail-node-v4", "node")]
    [InlineData("samples/thumbnail-dotnet", "dotnet-isolated")]
    public void Each_programming_model_runs_its_worker_with_the_apps_settings_from_the_settings_secret(string sample, string runtime)
    {
        KubernetesManifests manifests = KubernetesManifests.Of(sample);
        V1Container host = Assert.Single(manifests.Single<V1Deployment>(manifests.App).Spec.Template.Spec.Containers);
        V1Secret settings = manifests.Single<V1Secret>($"{manifests.App}-settings");
        var local = JsonNode.Parse(File.ReadAllText(Path.Combine(manifests.Directory, "local.settings.json")))!["Values"]!.AsObject();

        Assert.Equal(Path.GetFileName(sample), manifests.App);
        Assert.Equal(runtime, host.Env.Single(e => e.Name == "FUNCTIONS_WORKER_RUNTIME").Value);
        Assert.Equal(("Opaque", KubernetesManifests.SampleStorage), (settings.Type, settings.StringData["AzureWebJobsStorage"]));
        Assert.Equal(local.Select(p => p.Key).Where(k => k != "FUNCTIONS_WORKER_RUNTIME").Order(StringComparer.Ordinal), settings.StringData.Keys.Order(StringComparer.Ordinal));
        Assert.Equal(settings.StringData.Keys.Order(StringComparer.Ordinal), host.Env.Where(e => e.ValueFrom?.SecretKeyRef is not null).Select(e => e.ValueFrom.SecretKeyRef.Key).Order(StringComparer.Ordinal));
        Assert.All(host.Env.Where(e => e.ValueFrom?.SecretKeyRef is not null), e => Assert.Equal(e.Name, e.ValueFrom.SecretKeyRef.Key));
        Assert.Equal($"{manifests.App}:latest", host.Image);
        Assert.Equal("faascache-controller:dev", Assert.Single(manifests.Single<V1Deployment>($"{manifests.App}-controller").Spec.Template.Spec.Containers).Image);
    }

    [Theory]
    [MemberData(nameof(Samples))]
    public void The_shared_memory_limit_is_host_jsons_capacity_and_half_as_much_again_for_the_workers_output(string sample)
    {
        KubernetesManifests manifests = KubernetesManifests.Of(sample);
        long capacity = FaaSCacheOptionsReader.ReadHostJson(Path.Combine(manifests.Directory, "host.json")).CapacityBytes!.Value;

        (long shm, long limit) = Memory(manifests);

        Assert.Equal(CeilingMi(capacity * 3 / 2), shm);
        Assert.Equal(shm + (512L << 20), limit);
    }

    [Theory]
    [InlineData(100_000_000L, 144L)] // 150,000,000 bytes is 143.05 MiB: rounded up
    [InlineData(1L << 30, 1536L)]
    [InlineData(null, 308L)] // the host's default: a quarter of the container's limit (820 MiB), 205 MiB, and half again
    public void The_shared_memory_limit_follows_the_capacity_rounded_up_to_a_mebibyte(long? capacity, long shmMi)
    {
        string app = WriteApp("sized", capacity is null ? "{}" : $"{{ \"capacityBytes\": {capacity} }}");

        (long shm, long limit) = Memory(KubernetesManifests.Generate(app, "--storage", KubernetesManifests.SampleStorage));

        Assert.Equal((shmMi << 20, (shmMi + 512) << 20), (shm, limit));
        if (capacity is null)
        {
            // The fixed point: in a container limited to 820 MiB the host takes a quarter, 205 MiB, and half again is 308 MiB.
            Assert.Equal(shm, CeilingMi(limit / 4 * 3 / 2));
        }
    }

    [Fact]
    public void The_keys_secret_holds_a_master_key_and_a_function_key_that_the_host_reads_from_its_mount()
    {
        KubernetesManifests manifests = KubernetesManifests.Of("samples/thumbnail-node");
        V1Secret keys = manifests.Single<V1Secret>("thumbnail-node-keys");
        DirectoryInfo mount = _temp.CreateSubdirectory("functions-keys");
        foreach ((string name, string value) in keys.StringData)
        {
            File.WriteAllText(Path.Combine(mount.FullName, name), value);
        }

        HostKeys read = new MountedSecretKeyStore(mount.FullName).GetHostKeys();

        Assert.Equal(keys.StringData["host.master"], read.MasterKey);
        Assert.Equal(keys.StringData["host.function.default"], Assert.Single(read.FunctionKeys, k => k.Key == "default").Value);
        Assert.All(keys.StringData.Values, key => Assert.Matches(Base64UrlOf40Bytes(), key));
        Assert.NotEqual(keys.StringData["host.master"], KubernetesManifests.Of("samples/thumbnail-node").Single<V1Secret>("thumbnail-node-keys").StringData["host.master"]);
    }

    [Fact]
    public void No_secrets_leaves_both_secrets_out_and_says_how_to_create_them_with_every_key_the_pods_read()
    {
        (int code, string output, _) = KubernetesManifests.Run("--script-root", Path.Combine(RepositoryRoot.Find(), "samples", "thumbnail-node"), "--no-secrets");

        Assert.Equal(0, code);
        Assert.Empty(KubernetesManifests.Parse(output).OfType<V1Secret>());
        Assert.Contains("kubectl -n default create secret generic thumbnail-node-settings", output, StringComparison.Ordinal);
        Assert.Contains("--from-literal=AzureWebJobsStorage=", output, StringComparison.Ordinal);
        Assert.Contains("kubectl -n default create secret generic thumbnail-node-keys", output, StringComparison.Ordinal);
        Assert.Contains("--from-literal=host.master=", output, StringComparison.Ordinal);
    }

    [Fact]
    public void The_options_reach_the_objects_and_yaml_11_words_stay_strings()
    {
        KubernetesManifests manifests = KubernetesManifests.Generate(
            "samples/thumbnail-node-v4", "--app-name", "thumbs", "--image", "registry.example.com/thumbs:1.2", "--controller-image", "registry.example.com/ctl:3",
            "--replicas", "2", "--max-replicas", "10", "--namespace", "prod", "--storage", KubernetesManifests.SampleStorage);
        string yaml = KubernetesManifests.Run(
            "--script-root", Path.Combine(RepositoryRoot.Find(), "samples", "thumbnail-node-v4"), "--storage", KubernetesManifests.SampleStorage).Output;

        V1Deployment hosts = manifests.Single<V1Deployment>("thumbs");
        Assert.Equal((2, "registry.example.com/thumbs:1.2"), (hosts.Spec.Replicas, Assert.Single(hosts.Spec.Template.Spec.Containers).Image));
        Assert.Equal("registry.example.com/ctl:3", Assert.Single(manifests.Single<V1Deployment>("thumbs-controller").Spec.Template.Spec.Containers).Image);
        Assert.Equal(10, Assert.Single(manifests.All.OfType<KedaScaledObject>()).Spec.MaxReplicaCount);
        Assert.Equal("thumbs-controller.prod.svc.cluster.local:8081", Assert.Single(Assert.Single(manifests.All.OfType<KedaScaledObject>()).Spec.Triggers).Metadata["scalerAddress"]);
        // A YAML 1.1 reader (kubectl's) takes a bare on as true and 7071 as a number: the args must stay strings.
        Assert.Contains("- \"on\"\n", yaml, StringComparison.Ordinal);
        Assert.Contains("- \"7071\"\n", yaml, StringComparison.Ordinal);
    }

    [Fact]
    public void The_default_name_is_the_folders_lowercased_as_a_dns_label()
    {
        string app = WriteApp("My_Thumbnail.App", "{}");

        KubernetesManifests manifests = KubernetesManifests.Generate(app, "--storage", KubernetesManifests.SampleStorage, "--app-name", "my-thumbnail-app");
        (int code, string output, _) = KubernetesManifests.Run("--script-root", app, "--storage", KubernetesManifests.SampleStorage);

        Assert.Equal(0, code);
        Assert.Equal(
            manifests.All.OfType<k8s.IKubernetesObject<V1ObjectMeta>>().Select(o => o.Metadata.Name),
            KubernetesManifests.Parse(output).OfType<k8s.IKubernetesObject<V1ObjectMeta>>().Select(o => o.Metadata.Name));
        Assert.Equal("default", Assert.Single(KubernetesManifests.Parse(output).OfType<V1Service>(), s => s.Metadata.Name == "my-thumbnail-app").Metadata.NamespaceProperty);
    }

    public static TheoryData<string> Samples => new() { "samples/amber-alert", "samples/amber-alert-v2", "samples/thumbnail-node", "samples/thumbnail-node-v4", "samples/thumbnail-dotnet" };

    public static TheoryData<string, string[], string> Mistakes => new()
    {
        { "the development storage", ["--script-root", "samples/thumbnail-node"], "AzureWebJobsStorage is UseDevelopmentStorage=true" },
        { "the development storage", ["--script-root", "samples/thumbnail-node"], "In a pod, 127.0.0.1 is the pod itself" },
        { "an Azurite endpoint", ["--script-root", "samples/thumbnail-node", "--storage", "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1"], "AzureWebJobsStorage is at http://127.0.0.1:10000 (from --storage)" },
        { "not a connection string", ["--script-root", "samples/thumbnail-node", "--storage", "nonsense"], "AzureWebJobsStorage is not a storage connection string" },
        { "no host.json", ["--script-root", "samples"], "is not a function app folder: it has no host.json" },
        { "no folder", ["--script-root", "samples/no-such-app"], "does not exist" },
        { "no runtime", ["--script-root", "samples/demo", "--no-secrets"], "Set FUNCTIONS_WORKER_RUNTIME in local.settings.json" },
        { "replicas below 0", ["--script-root", "samples/thumbnail-node", "--no-secrets", "--replicas", "-1"], "--replicas -1 must be from 0 to --max-replicas (6)" },
        { "replicas above the most", ["--script-root", "samples/thumbnail-node", "--no-secrets", "--replicas", "7"], "--replicas 7 must be from 0 to --max-replicas (6)" },
        { "replicas not a number", ["--script-root", "samples/thumbnail-node", "--no-secrets", "--replicas", "two"], "'two' for option '--replicas'" },
        { "too many replicas", ["--script-root", "samples/thumbnail-node", "--no-secrets", "--max-replicas", "65"], "--max-replicas 65 must be from 1 to 64" },
        { "an app name that is no DNS label", ["--script-root", "samples/thumbnail-node", "--no-secrets", "--app-name", "Thumbnail_Node"], "--app-name 'Thumbnail_Node' is not a valid name" },
        { "a namespace that is no DNS label", ["--script-root", "samples/thumbnail-node", "--no-secrets", "--namespace", "Prod"], "--namespace 'Prod' is not a Kubernetes namespace name" },
        { "an unknown option", ["--script-root", "samples/thumbnail-node", "--no-secret"], "--no-secret" },
    };

    [Theory]
    [MemberData(nameof(Mistakes))]
    public void A_mistake_is_one_message_on_stderr_naming_it_with_nothing_on_stdout(string mistake, string[] arguments, string message)
    {
        string root = RepositoryRoot.Find();
        string[] resolved = [.. arguments.Select((a, i) => i > 0 && arguments[i - 1] == "--script-root" ? Path.Combine(root, a) : a)];

        (int code, string output, string error) = KubernetesManifests.Run(resolved);

        Assert.True(code != 0, mistake);
        Assert.Equal(string.Empty, output);
        Assert.Contains(message, error, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("AzureWebJobsStorage:blobServiceUri", "write ':' as '__'")]
    [InlineData("1stSetting", "not starting with a digit")]
    [InlineData("MY SETTING", "cannot be a Kubernetes Secret key and environment variable name")]
    public void A_setting_that_cannot_be_a_secret_key_or_variable_name_is_named(string setting, string message)
    {
        string app = WriteApp("named", "{}", new Dictionary<string, string> { [setting] = "x" });

        (int code, string output, string error) = KubernetesManifests.Run("--script-root", app, "--storage", KubernetesManifests.SampleStorage);

        Assert.NotEqual(0, code);
        Assert.Equal(string.Empty, output);
        Assert.Contains($"the setting '{setting}'", error, StringComparison.Ordinal);
        Assert.Contains(message, error, StringComparison.Ordinal);
    }

    private static (long Shm, long Limit) Memory(KubernetesManifests manifests)
    {
        V1PodSpec pod = manifests.Single<V1Deployment>(manifests.App).Spec.Template.Spec;
        return (pod.Volumes.Single(v => v.Name == "shm").EmptyDir.SizeLimit.ToInt64(), Assert.Single(pod.Containers).Resources.Limits["memory"].ToInt64());
    }

    private static long CeilingMi(long bytes) => (bytes + (1L << 20) - 1) >> 20 << 20;

    // A Python v2 app: host.json with the given faasCache section, function_app.py, local.settings.json.
    private string WriteApp(string folder, string faasCache, Dictionary<string, string>? settings = null)
    {
        DirectoryInfo app = _temp.CreateSubdirectory(folder);
        File.WriteAllText(Path.Combine(app.FullName, "host.json"), $"{{ \"version\": \"2.0\", \"extensions\": {{ \"faasCache\": {faasCache} }} }}");
        File.WriteAllText(Path.Combine(app.FullName, "function_app.py"), "import azure.functions as func\napp = func.FunctionApp()\n");
        var values = new JsonObject { ["AzureWebJobsStorage"] = "UseDevelopmentStorage=true" };
        foreach ((string name, string value) in settings ?? [])
        {
            values[name] = value;
        }

        File.WriteAllText(Path.Combine(app.FullName, "local.settings.json"), new JsonObject { ["IsEncrypted"] = false, ["Values"] = values }.ToJsonString());
        return app.FullName;
    }

    [GeneratedRegex("^[A-Za-z0-9_-]{54}$", RegexOptions.CultureInvariant)]
    private static partial Regex Base64UrlOf40Bytes();
}
