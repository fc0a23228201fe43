using System.CommandLine;
using FaaSCache.Tools.Kubernetes;
using k8s;
using k8s.Models;

namespace FaaSCache.Keda.Tests;

/// <summary>
/// The objects of deploy/kubernetes, or of <c>faascache kubernetes manifests</c> for a sample (run in-process), loaded with
/// the KubernetesClient library's models (strictly: unknown fields fail; KEDA's ScaledObject with this project's model).
/// </summary>
internal sealed class KubernetesManifests
{
    /// <summary>The committed manifests' source, as <see cref="Of"/> names it.</summary>
    public const string Committed = "deploy/kubernetes";

    /// <summary>The namespace the samples' manifests are generated for (not the default, to see it reach every object).</summary>
    public const string SampleNamespace = "apps";

    /// <summary>The storage the samples' Secrets get (the development storage is refused: a pod cannot reach it).</summary>
    public const string SampleStorage = "DefaultEndpointsProtocol=https;AccountName=faascachetest;AccountKey=a2V5;EndpointSuffix=core.windows.net";

    private static readonly Dictionary<string, Type> TypeMap = new()
    {
        ["v1/Namespace"] = typeof(V1Namespace),
        ["v1/Secret"] = typeof(V1Secret),
        ["v1/Service"] = typeof(V1Service),
        ["apps/v1/Deployment"] = typeof(V1Deployment),
        [KedaScaledObject.TypeKey] = typeof(KedaScaledObject),
    };

    private KubernetesManifests(string directory, string app, string ns, Dictionary<string, List<object>> byFile)
    {
        Directory = directory;
        App = app;
        Namespace = ns;
        ByFile = byFile;
    }

    /// <summary>Gets the folder the manifests were read from (the app folder, for a generated one).</summary>
    public string Directory { get; }

    /// <summary>Gets the app the manifests are for (names the host Deployment, its Service and the ScaledObject).</summary>
    public string App { get; }

    /// <summary>Gets the namespace every object should be in.</summary>
    public string Namespace { get; }

    /// <summary>Gets each YAML file's objects, by file name.</summary>
    public Dictionary<string, List<object>> ByFile { get; }

    /// <summary>Gets every object of every file.</summary>
    public IEnumerable<object> All => ByFile.Values.SelectMany(o => o);

    /// <summary>The sources the consistency tests run on: the committed manifests and a sample of each programming model.</summary>
    public static TheoryData<string> Sources => new()
    {
        Committed,
        "samples/amber-alert",      // Python v1 (function.json folders)
        "samples/amber-alert-v2",   // Python v2 (function_app.py)
        "samples/thumbnail-node",   // Node.js v3 (function.json folders)
        "samples/thumbnail-node-v4", // Node.js v4 (@azure/functions 4.x)
        "samples/thumbnail-dotnet", // C# isolated (a project folder)
    };

    /// <summary>The manifests of <paramref name="source"/>: <see cref="Committed"/>, or a sample folder's generated ones.</summary>
    public static KubernetesManifests Of(string source) =>
        source == Committed ? Load() : Generate(source, "--namespace", SampleNamespace, "--storage", SampleStorage);

    /// <summary>Loads every *.yaml of deploy/kubernetes except the kustomization (not a Kubernetes object).</summary>
    public static KubernetesManifests Load()
    {
        string directory = Path.Combine(RepositoryRoot.Find(), "deploy", "kubernetes");
        var byFile = new Dictionary<string, List<object>>(StringComparer.Ordinal);
        foreach (string file in System.IO.Directory.EnumerateFiles(directory, "*.yaml").Order(StringComparer.Ordinal))
        {
            if (Path.GetFileName(file) != "kustomization.yaml")
            {
                byFile[Path.GetFileName(file)] = Parse(File.ReadAllText(file));
            }
        }

        return new KubernetesManifests(directory, "thumbnail-node", "faascache", byFile);
    }

    /// <summary>The manifests <c>faascache kubernetes manifests</c> writes for a sample (a path under the repository).</summary>
    public static KubernetesManifests Generate(string sample, params string[] arguments)
    {
        string root = Path.Combine(RepositoryRoot.Find(), sample);
        (int code, string output, string error) = Run(["--script-root", root, .. arguments]);
        Assert.True(code == 0, $"faascache kubernetes manifests for {sample} failed ({code}): {error}");
        string ns = arguments.Contains("--namespace") ? arguments[Array.IndexOf(arguments, "--namespace") + 1] : KubernetesManifestOptions.DEFAULT_NAMESPACE;
        string app = arguments.Contains("--app-name") ? arguments[Array.IndexOf(arguments, "--app-name") + 1] : Path.GetFileName(root);
        return new KubernetesManifests(root, app, ns, new Dictionary<string, List<object>> { [$"{app}.yaml"] = Parse(output) });
    }

    /// <summary>Runs <c>faascache kubernetes manifests</c> in this process as the tool's Program does: the exit code, stdout and stderr.</summary>
    public static (int Code, string Output, string Error) Run(params string[] arguments)
    {
        var root = new RootCommand { KubernetesCommand.Create() };
        ParseResult parsed = root.Parse(["kubernetes", "manifests", .. arguments]);
        KubernetesCommand.KeepOutputClean(parsed);
        using var output = new StringWriter();
        using var error = new StringWriter();
        int code = parsed.Invoke(new InvocationConfiguration { Output = output, Error = error });
        return (code, output.ToString(), error.ToString());
    }

    /// <summary>The objects of a multi-document YAML, strictly.</summary>
    public static List<object> Parse(string yaml) => KubernetesYaml.LoadAllFromString(yaml, TypeMap, strict: true);

    /// <summary>The one object of type <typeparamref name="T"/> named <paramref name="name"/>.</summary>
    public T Single<T>(string name)
        where T : IKubernetesObject<V1ObjectMeta> =>
        Assert.Single(All.OfType<T>(), o => o.Metadata.Name == name);
}
