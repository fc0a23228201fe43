namespace FaaSCache.Testing;

/// <summary>The build outputs of the repository's C# isolated apps (samples/thumbnail-dotnet, benchmarks/apps/dotnet-isolated).</summary>
public static class DotnetBuildOutput
{
    /// <summary>The folder of <paramref name="project"/>'s Release build output (the one holding worker.config.json).</summary>
    public static string Find(params string[] project)
    {
        string root = Path.Combine([RepositoryRoot.Find(), .. project, "bin", "Release"]);
        return (Directory.Exists(root) ? Directory.EnumerateFiles(root, "worker.config.json", SearchOption.AllDirectories).Select(Path.GetDirectoryName).FirstOrDefault() : null)
            ?? throw new InvalidOperationException($"No build output of {string.Join('/', project)} under '{root}': run bash scripts/setup.d/dotnet-apps.sh (scripts/setup.sh does).");
    }

    /// <summary>
    /// A C# isolated app's Release build output (what the host runs, as func start does), as a temporary app folder of
    /// links to it (host.json and local.settings.json copied, so a test can change them); <paramref name="project"/> is
    /// the project folder relative to the repository. scripts/setup.d/dotnet-apps.sh builds the outputs.
    /// </summary>
    public static FunctionAppFolder Link(params string[] project)
    {
        string output = Find(project);
        var builder = new FunctionAppBuilder { NamePrefix = $"faascache-{project[^1]}" }
            .WithHostJson(File.ReadAllText(Path.Combine(output, "host.json")))
            .WithLocalSettingsJson(File.ReadAllText(Path.Combine(output, "local.settings.json")));
        foreach (string file in Directory.EnumerateFiles(output, "*", SearchOption.TopDirectoryOnly).Where(f => Path.GetFileName(f) is not ("host.json" or "local.settings.json")))
        {
            builder.WithSymbolicLink(Path.GetFileName(file), file);
        }

        foreach (string dir in Directory.EnumerateDirectories(output))
        {
            builder.WithSymbolicLink(Path.GetFileName(dir), dir);
        }

        return builder.Build();
    }
}
