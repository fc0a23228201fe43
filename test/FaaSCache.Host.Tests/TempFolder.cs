namespace FaaSCache.Host.Tests;

/// <summary>An empty temporary folder, deleted on dispose.</summary>
internal sealed class TempFolder : IDisposable
{
    public TempFolder(string prefix) => Path = Directory.CreateTempSubdirectory(prefix).FullName;

    public string Path { get; }

    public void Dispose()
    {
        if (Directory.Exists(Path))
        {
            Directory.Delete(Path, recursive: true);
        }
    }
}
