using System.Collections.Concurrent;
using System.Diagnostics;
using System.Globalization;
using Azure.Storage.Blobs;
using FaaSCache.Testing;

namespace FaaSCache.Benchmarks;

/// <summary>One download into memory as the SDK's caller timed it.</summary>
internal readonly record struct SdkDownload(double Microseconds, long Bytes);

/// <summary>
/// One official storage SDK as a function uses it: a client from a connection string (storage's, or the SDK
/// endpoint's: the same code reads both), warmed by one read of another blob, then whole downloads into memory.
/// </summary>
internal interface ISdkReader
{
    /// <summary>Gets the CSV's <c>sdk</c> value: dotnet, node or python.</summary>
    string Sdk { get; }

    /// <summary>Gets what runs: the SDK, its version, the call and the process.</summary>
    string Description { get; }

    /// <summary>Reads <paramref name="warmup"/> once untimed, then each of <paramref name="blobs"/> <paramref name="repetitions"/> times, blob after blob.</summary>
    Task<IReadOnlyList<SdkDownload>> ReadAsync(string connection, string warmup, IReadOnlyList<string> blobs, int repetitions, CancellationToken cancellationToken);
}

/// <summary>
/// The three readers, dotnet in this process and node and python as child processes (download.js and download.py in
/// FaaSCache.Testing's sdk-clients folder, <see cref="SdkClientScripts"/>).
/// </summary>
internal static class SdkReaders
{
    public static async Task<IReadOnlyList<ISdkReader>> CreateAsync(string container, CancellationToken cancellationToken) =>
    [
        new DotnetSdkReader(container),
        await ScriptSdkReader.StartAsync("node", SdkClientScripts.NodeProgram, SdkClientScripts.NodeScript("download.js"), container, "downloadToBuffer()", cancellationToken),
        await ScriptSdkReader.StartAsync("python", SdkClientScripts.PythonProgram, SdkClientScripts.PythonScript("download.py"), container, "download_blob().readall()", cancellationToken),
    ];
}

/// <summary>Azure.Storage.Blobs in the benchmark's own process: <c>BlobClient.DownloadContentAsync()</c> (one GET, the bytes in a <see cref="BinaryData"/>).</summary>
internal sealed class DotnetSdkReader(string container) : ISdkReader
{
    private readonly ConcurrentDictionary<string, BlobContainerClient> _clients = new(StringComparer.Ordinal);

    public string Sdk => "dotnet";

    public string Description =>
        $"Azure.Storage.Blobs {typeof(BlobClient).Assembly.GetName().Version?.ToString(3)} (service version pinned to {AzuriteServer.PinnedServiceVersion}), " +
        $".NET {Environment.Version}, in this process: DownloadContentAsync()";

    public async Task<IReadOnlyList<SdkDownload>> ReadAsync(string connection, string warmup, IReadOnlyList<string> blobs, int repetitions, CancellationToken cancellationToken)
    {
        // One client per connection string for the whole run, as a function keeps its client in a static.
        BlobContainerClient folder = _clients.GetOrAdd(connection, c => new BlobServiceClient(c, new BlobClientOptions(AzuriteServer.PinnedServiceVersion)).GetBlobContainerClient(container));
        await folder.GetBlobClient(warmup).DownloadContentAsync(cancellationToken);
        var clients = blobs.Select(folder.GetBlobClient).ToList();
        var downloads = new List<SdkDownload>(repetitions * clients.Count);
        for (int r = 0; r < repetitions; r++)
        {
            foreach (BlobClient client in clients)
            {
                long start = Stopwatch.GetTimestamp();
                BinaryData data = (await client.DownloadContentAsync(cancellationToken)).Value.Content;
                long end = Stopwatch.GetTimestamp();
                downloads.Add(new SdkDownload(LatencySamples.ToMicroseconds(end - start), data.ToMemory().Length));
            }
        }

        return downloads;
    }
}

/// <summary>
/// A reader script in a process of its own per batch (<c>download.js</c>, <c>download.py</c>): it prints
/// <c># &lt;sdk&gt; &lt;version&gt;, &lt;runtime&gt;</c>, then <c>&lt;microseconds&gt; &lt;bytes&gt;</c> per read.
/// </summary>
internal sealed class ScriptSdkReader : ISdkReader
{
    // A batch is at most a few dozen reads; even 128 MB ones take seconds each.
    private static readonly TimeSpan BatchTimeout = TimeSpan.FromMinutes(10);

    private readonly string _program;
    private readonly string _script;
    private readonly string _container;

    private ScriptSdkReader(string sdk, string program, string script, string container, string description)
    {
        Sdk = sdk;
        _program = program;
        _script = script;
        _container = container;
        Description = description;
    }

    public string Sdk { get; }

    public string Description { get; }

    /// <summary>Runs the script with <c>--version</c>: it loads the SDK and says which one it is, or the run stops here.</summary>
    public static async Task<ScriptSdkReader> StartAsync(string sdk, string program, string script, string container, string call, CancellationToken cancellationToken)
    {
        (int code, string stdout, string stderr) = await RunAsync(program, [script, "--version"], cancellationToken);
        string? header = stdout.Split('\n').FirstOrDefault(l => l.StartsWith('#'));
        if (code != 0 || header is null)
        {
            throw new InvalidOperationException($"{program} {script} --version exited {code} without its '# <sdk> <version>' line; stderr: {stderr.Trim()}");
        }

        return new ScriptSdkReader(sdk, program, script, container, $"{header[1..].Trim()}, {Path.GetFileName(script)} in a child process per batch: {call}");
    }

    public async Task<IReadOnlyList<SdkDownload>> ReadAsync(string connection, string warmup, IReadOnlyList<string> blobs, int repetitions, CancellationToken cancellationToken)
    {
        (int code, string stdout, string stderr) = await RunAsync(
            _program,
            [_script, connection, _container, repetitions.ToString(CultureInfo.InvariantCulture), warmup, .. blobs],
            cancellationToken);
        if (code != 0)
        {
            throw new InvalidOperationException($"{Sdk} reader ({_program} {Path.GetFileName(_script)}) exited {code} reading {string.Join(", ", blobs)}: {stderr.Trim()}");
        }

        var downloads = new List<SdkDownload>(repetitions * blobs.Count);
        foreach (string line in stdout.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            if (line.StartsWith('#'))
            {
                continue;
            }

            string[] fields = line.Split(' ');
            downloads.Add(new SdkDownload(
                double.Parse(fields[0], CultureInfo.InvariantCulture),
                long.Parse(fields[1], CultureInfo.InvariantCulture)));
        }

        if (downloads.Count != repetitions * blobs.Count)
        {
            throw new InvalidOperationException($"{Sdk} reader printed {downloads.Count} latencies for {repetitions} x {blobs.Count} reads: {stdout}{stderr}");
        }

        return downloads;
    }

    private static async Task<(int Code, string Stdout, string Stderr)> RunAsync(string program, IEnumerable<string> arguments, CancellationToken cancellationToken)
    {
        ProcessRun run = await ProcessRun.RunAsync(program, arguments, BatchTimeout, cancellationToken: cancellationToken);
        return (run.ExitCode, run.Stdout, run.Stderr);
    }
}
