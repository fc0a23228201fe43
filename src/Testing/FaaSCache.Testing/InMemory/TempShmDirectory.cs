namespace FaaSCache.Testing;

/// <summary>
/// A unique directory under /dev/shm (e.g. /dev/shm/faascache-test-&lt;guid&gt;) to use as a
/// shared-memory root in tests; deleted recursively on dispose (or when the test process exits).
/// </summary>
public sealed class TempShmDirectory : IDisposable
{
    public const string ShmRoot = "/dev/shm";
    public const string DefaultPrefix = "faascache-test";

    private readonly OwnedDirectory _directory;

    public TempShmDirectory(string prefix = DefaultPrefix)
    {
        if (!Directory.Exists(ShmRoot))
        {
            throw new PlatformNotSupportedException($"{ShmRoot} does not exist: shared-memory tests need Linux tmpfs at {ShmRoot}.");
        }

        _directory = new OwnedDirectory(ShmRoot, prefix);
    }

    /// <summary>Full path of the directory, e.g. /dev/shm/faascache-test-0123abcd....</summary>
    public string Path => _directory.Path;

    public override string ToString() => Path;

    public void Dispose() => _directory.Dispose();
}
