using k8s;
using k8s.Models;

namespace FaaSCache.Keda.Tests;

/// <summary>The objects of deploy/kubernetes, loaded with the KubernetesClient library's models (strictly: unknown fields fail).</summary>
internal sealed class KubernetesManifests
{
    private static readonly Dictionary<string, Type> TypeMap = new()
    {
        ["v1/Namespace"] = typeof(V1Namespace),
        ["v1/ConfigMap"] = typeof(V1ConfigMap),
        ["v1/Service"] = typeof(V1Service),
        ["apps/v1/Deployment"] = typeof(V1Deployment),
        [KedaScaledObject.TypeKey] = typeof(KedaScaledObject),
    };

    private KubernetesManifests(string directory, Dictionary<string, List<object>> byFile)
    {
        Directory = directory;
        ByFile = byFile;
    }

    /// <summary>Gets the folder the manifests were read from.</summary>
    public string Directory { get; }

    /// <summary>Gets each YAML file's objects, by file name.</summary>
    public Dictionary<string, List<object>> ByFile { get; }

    /// <summary>Gets every object of every file.</summary>
    public IEnumerable<object> All => ByFile.Values.SelectMany(o => o);

    /// <summary>Loads every *.yaml of deploy/kubernetes except the kustomization (not a Kubernetes object).</summary>
    public static KubernetesManifests Load()
    {
        string directory = Path.Combine(FaaSCache.Testing.RepositoryRoot.Find(), "deploy", "kubernetes");
        var byFile = new Dictionary<string, List<object>>(StringComparer.Ordinal);
        foreach (string file in System.IO.Directory.EnumerateFiles(directory, "*.yaml").Order(StringComparer.Ordinal))
        {
            if (Path.GetFileName(file) != "kustomization.yaml")
            {
                byFile[Path.GetFileName(file)] = KubernetesYaml.LoadAllFromString(File.ReadAllText(file), TypeMap, strict: true);
            }
        }

        return new KubernetesManifests(directory, byFile);
    }

    /// <summary>The one object of type <typeparamref name="T"/> named <paramref name="name"/>.</summary>
    public T Single<T>(string name)
        where T : IKubernetesObject<V1ObjectMeta> =>
        Assert.Single(All.OfType<T>(), o => o.Metadata.Name == name);
}
