namespace FaaSCache.NetworkEmulation.Tests;

/// <summary>
/// The namespaces of one test: a prefix of its own, indices no other link on the machine uses, and on dispose the
/// removal of everything with the prefix (even after a failure) followed by a check that nothing is left.
/// </summary>
internal sealed class TestNetwork : IAsyncDisposable
{
    private const int FirstIndex = 200;
    private const int LastIndex = 254;
    private static readonly Lock IndexGate = new();
    private static readonly HashSet<int> IndicesInUse = [];
    private readonly List<int> _indices = [];

    public TestNetwork()
    {
        // 'ne' and 5 random letters: 7 characters leave room for "v254a".
        Prefix = "ne" + string.Concat(Enumerable.Range(0, 5).Select(_ => (char)('a' + Random.Shared.Next(26))));
    }

    public string Prefix { get; }

    /// <summary>Makes a namespace of this test's prefix at an index no address on the machine uses yet.</summary>
    public async Task<NetworkNamespace> CreateAsync(ShapedLinkOptions link, CancellationToken ct = default)
    {
        for (var attempt = 0; ; attempt++)
        {
            var index = TakeIndex();
            try
            {
                return await NetworkNamespace.CreateAsync(Prefix, index, link, ct);
            }
            catch (NetworkEmulationException e) when (attempt < 3 && e.Message.Contains("is taken", StringComparison.Ordinal))
            {
                // Another process took the index between the look and the create: try the next one.
            }
        }
    }

    /// <summary>An index that neither this process nor any address on the machine uses (10.250.&lt;index&gt;.0/30).</summary>
    public int TakeIndex()
    {
        var taken = Run("ip", "-o", "-4", "addr", "show");
        lock (IndexGate)
        {
            for (var index = FirstIndex; index <= LastIndex; index++)
            {
                if (!IndicesInUse.Contains(index) && !taken.Contains(FormattableString.Invariant($" inet 10.250.{index}."), StringComparison.Ordinal))
                {
                    IndicesInUse.Add(index);
                    _indices.Add(index);
                    return index;
                }
            }
        }

        throw new InvalidOperationException($"no free index between {FirstIndex} and {LastIndex}");
    }

    public async ValueTask DisposeAsync()
    {
        try
        {
            await NetworkNamespace.CleanupAsync(Prefix);
            Assert.Empty(Leftovers(Prefix));
        }
        finally
        {
            lock (IndexGate)
            {
                IndicesInUse.ExceptWith(_indices);
            }
        }
    }

    /// <summary>The namespaces and interfaces whose names start with <paramref name="prefix"/>, as `ip` lists them.</summary>
    public static List<string> Leftovers(string prefix) =>
        NetworkNamespace.ParseNamespaceNames(Run("ip", "netns", "list"))
            .Concat(NetworkNamespace.ParseLinkNames(Run("ip", "-o", "link", "show")))
            .Where(name => name.StartsWith(prefix, StringComparison.Ordinal))
            .ToList();

    /// <summary>Runs a short command in the root namespace and returns its stdout, failing the test with its stderr.</summary>
    public static string Run(string fileName, params string[] arguments)
    {
        var startInfo = new ProcessStartInfo(fileName) { RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (var argument in arguments)
        {
            startInfo.ArgumentList.Add(argument);
        }

        using var process = Process.Start(startInfo)!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEnd();
        if (!process.WaitForExit(TimeSpan.FromSeconds(30)))
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"{fileName} {string.Join(' ', arguments)} did not finish in 30 s");
        }

        Assert.True(process.ExitCode == 0,
            string.Create(CultureInfo.InvariantCulture, $"{fileName} {string.Join(' ', arguments)} exited {process.ExitCode}: {stderr}"));
        return stdout.Result;
    }
}
