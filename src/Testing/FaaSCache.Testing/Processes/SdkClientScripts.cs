namespace FaaSCache.Testing;

/// <summary>
/// The official storage SDKs' scripts in <c>src/Testing/FaaSCache.Testing/sdk-clients/</c>, run as child processes
/// (<see cref="ProcessRun"/>) by the SDK-endpoint tests and the sdk-read benchmark: Node's <c>@azure/storage-blob</c>,
/// pinned by the folder's package-lock.json and installed there by <c>scripts/setup.sh</c> (<c>npm ci</c>), and
/// Python's <c>azure-storage-blob</c> from Debian (python3-azure-storage).
/// </summary>
public static class SdkClientScripts
{
    /// <summary>The Node runtime (on PATH).</summary>
    public const string NodeProgram = "node";

    /// <summary>The Python the Debian SDK is installed for.</summary>
    public const string PythonProgram = "/usr/bin/python3";

    /// <summary>The environment variable the check scripts (<c>sdk-check.*</c>) read the connection through the SDK endpoint from.</summary>
    public const string EndpointConnectionVariable = "FAASCACHE_SDK_ENDPOINT_CONNECTION";

    /// <summary>The environment variable the check scripts read the connection straight to storage from.</summary>
    public const string StorageConnectionVariable = "FAASCACHE_SDK_STORAGE_CONNECTION";

    /// <summary>Gets the folder's path below the repository root.</summary>
    public static string RelativeFolder { get; } = Path.Combine("src", "Testing", "FaaSCache.Testing", "sdk-clients");

    /// <summary>Gets the folder.</summary>
    public static string Folder => Path.Combine(RepositoryRoot.Find(), RelativeFolder);

    /// <summary>
    /// The path of the Node script <paramref name="name"/>; throws <see cref="InvalidOperationException"/> naming the fix
    /// when the folder's <c>@azure/storage-blob</c> is not installed.
    /// </summary>
    public static string NodeScript(string name)
    {
        string package = Path.Combine(Folder, "node_modules", "@azure", "storage-blob", "package.json");
        if (!File.Exists(package))
        {
            throw new InvalidOperationException(
                $"{package} is missing: the Node SDK clients need @azure/storage-blob from {RelativeFolder}/package-lock.json; run bash scripts/setup.sh (it runs npm ci there).");
        }

        return Script(name);
    }

    /// <summary>The path of the Python script <paramref name="name"/>.</summary>
    public static string PythonScript(string name) => Script(name);

    /// <summary>
    /// Runs the script <paramref name="name"/> from the folder to its end (<see cref="ProcessRun.RunAsync"/>), under
    /// Node (<c>.js</c>) or Python (<c>.py</c>), with <paramref name="environment"/> added to this process's.
    /// </summary>
    public static Task<ProcessRun> RunAsync(string name, IEnumerable<string> arguments, TimeSpan timeout, IReadOnlyDictionary<string, string>? environment = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(name);
        (string program, string script) = Path.GetExtension(name) switch
        {
            ".js" => (NodeProgram, NodeScript(name)),
            ".py" => (PythonProgram, PythonScript(name)),
            _ => throw new ArgumentException($"{name}: an SDK client script is a .js or a .py file.", nameof(name)),
        };
        return ProcessRun.RunAsync(program, [script, .. arguments], timeout, environment, Folder, cancellationToken);
    }

    private static string Script(string name)
    {
        string path = Path.Combine(Folder, name);
        return File.Exists(path) ? path : throw new FileNotFoundException($"No SDK client script {name} in {RelativeFolder}.", path);
    }
}
