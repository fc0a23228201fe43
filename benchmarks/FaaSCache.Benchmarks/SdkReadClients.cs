using System.Diagnostics;
using System.Globalization;
using System.Text;
using Azure.Storage.Blobs;
using FaaSCache.Testing;

namespace FaaSCache.Benchmarks;

/// <summary>One download into memory as the SDK's caller timed it.</summary>
internal readonly record struct SdkDownload(double Microseconds, long Bytes);

/// <summary>A reader's batch: its timed downloads, and how many untimed reads of the warm-up blob came first.</summary>
internal sealed record SdkBatch(IReadOnlyList<SdkDownload> Downloads, int WarmupReads);

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
    Task<SdkBatch> ReadAsync(string connection, string warmup, IReadOnlyList<string> blobs, int repetitions, CancellationToken cancellationToken);
}

/// <summary>
/// The three readers, each a child process per batch, as a function's SDK client runs in the function's worker process,
/// not in the host's: dotnet is this benchmark's own executable (<c>sdk-reader</c>, <see cref="DotnetSdkReader"/>), node
/// and python are download.js and download.py in FaaSCache.Testing's sdk-clients folder (<see cref="SdkClientScripts"/>).
/// </summary>
internal static class SdkReaders
{
    public static async Task<IReadOnlyList<ISdkReader>> CreateAsync(string container, CancellationToken cancellationToken) =>
    [
        await ScriptSdkReader.StartAsync("dotnet", "dotnet", [typeof(DotnetSdkReader).Assembly.Location, DotnetSdkReader.CommandName], container, "DownloadContentAsync()", cancellationToken),
        await ScriptSdkReader.StartAsync("node", SdkClientScripts.NodeProgram, [SdkClientScripts.NodeScript("download.js")], container, "downloadToBuffer()", cancellationToken),
        await ScriptSdkReader.StartAsync("python", SdkClientScripts.PythonProgram, [SdkClientScripts.PythonScript("download.py")], container, "download_blob().readall()", cancellationToken),
    ];
}

/// <summary>
/// Azure.Storage.Blobs as a function uses it, in a process of its own (<c>FaaSCache.Benchmarks sdk-reader</c>, the .NET
/// twin of download.js): one client from the connection string, <c>BlobClient.DownloadContentAsync()</c> (one GET, the
/// bytes in a <see cref="BinaryData"/>). The warm-up blob is read until the JIT has settled (at least
/// <see cref="WarmupReads"/> times and <see cref="WarmupTime"/>), then each blob is read as asked, only the call timed.
/// </summary>
internal static class DotnetSdkReader
{
    public const string CommandName = "sdk-reader";

    private const int WarmupReads = 5;
    private static readonly TimeSpan WarmupTime = TimeSpan.FromMilliseconds(500);

    /// <summary>The <c>sdk-reader</c> subcommand: <c>&lt;connection&gt; &lt;container&gt; &lt;repetitions&gt; &lt;warm-up blob&gt; &lt;blob&gt;...</c>, or <c>--version</c>.</summary>
    public static async Task<int> RunAsync(string[] args)
    {
        string header = $"# Azure.Storage.Blobs {typeof(BlobClient).Assembly.GetName().Version?.ToString(3)} (service version pinned to {AzuriteServer.PinnedServiceVersion}), .NET {Environment.Version}";
        if (args is ["--version"])
        {
            Console.WriteLine(header);
            return 0;
        }

        if (args.Length < 5 || !int.TryParse(args[2], NumberStyles.None, CultureInfo.InvariantCulture, out int repetitions))
        {
            await Console.Error.WriteLineAsync($"usage: FaaSCache.Benchmarks {CommandName} <connection string> <container> <repetitions> <warm-up blob> <blob>...");
            return 2;
        }

        BlobContainerClient folder = new BlobServiceClient(args[0], new BlobClientOptions(AzuriteServer.PinnedServiceVersion)).GetBlobContainerClient(args[1]);
        var clock = Stopwatch.StartNew();
        int warmups = 0;
        while (warmups < WarmupReads || clock.Elapsed < WarmupTime)
        {
            await folder.GetBlobClient(args[3]).DownloadContentAsync();
            warmups++;
        }

        var clients = args[4..].Select(folder.GetBlobClient).ToList();
        var lines = new StringBuilder();
        lines.Append(header).Append('\n').Append(CultureInfo.InvariantCulture, $"{ScriptSdkReader.WarmupLine}{warmups}").Append('\n');
        for (int r = 0; r < repetitions; r++)
        {
            foreach (BlobClient client in clients)
            {
                long start = Stopwatch.GetTimestamp();
                BinaryData data = (await client.DownloadContentAsync()).Value.Content;
                long end = Stopwatch.GetTimestamp();
                lines.Append(CultureInfo.InvariantCulture, $"{LatencySamples.ToMicroseconds(end - start):0.0} {data.ToMemory().Length}").Append('\n');
            }
        }

        Console.Write(lines.ToString());
        return 0;
    }
}

/// <summary>
/// A reader script in a process of its own per batch (<c>download.js</c>, <c>download.py</c>): it prints
/// <c># &lt;sdk&gt; &lt;version&gt;, &lt;runtime&gt;</c>, then <c>&lt;microseconds&gt; &lt;bytes&gt;</c> per read.
/// </summary>
internal sealed class ScriptSdkReader : ISdkReader
{
    /// <summary>A reader that reads its warm-up blob more than once says how often (<c># warm-up reads: N</c>); else once.</summary>
    public const string WarmupLine = "# warm-up reads: ";

    // A batch is at most a few dozen reads; even 128 MB ones take seconds each.
    private static readonly TimeSpan BatchTimeout = TimeSpan.FromMinutes(10);

    private readonly string _program;
    private readonly string[] _leading;
    private readonly string _container;

    private ScriptSdkReader(string sdk, string program, string[] leading, string container, string description)
    {
        Sdk = sdk;
        _program = program;
        _leading = leading;
        _container = container;
        Description = description;
    }

    public string Sdk { get; }

    public string Description { get; }

    /// <summary>Runs the script with <c>--version</c>: it loads the SDK and says which one it is, or the run stops here.</summary>
    public static async Task<ScriptSdkReader> StartAsync(string sdk, string program, string[] leading, string container, string call, CancellationToken cancellationToken)
    {
        string script = string.Join(' ', leading.Select(Path.GetFileName));
        (int code, string stdout, string stderr) = await RunAsync(program, [.. leading, "--version"], cancellationToken);
        string? header = stdout.Split('\n').FirstOrDefault(l => l.StartsWith('#'));
        if (code != 0 || header is null)
        {
            throw new InvalidOperationException($"{program} {script} --version exited {code} without its '# <sdk> <version>' line; stderr: {stderr.Trim()}");
        }

        return new ScriptSdkReader(sdk, program, leading, container, $"{header[1..].Trim()}, {script} in a child process per batch: {call}");
    }

    public async Task<SdkBatch> ReadAsync(string connection, string warmup, IReadOnlyList<string> blobs, int repetitions, CancellationToken cancellationToken)
    {
        (int code, string stdout, string stderr) = await RunAsync(
            _program,
            [.. _leading, connection, _container, repetitions.ToString(CultureInfo.InvariantCulture), warmup, .. blobs],
            cancellationToken);
        if (code != 0)
        {
            throw new InvalidOperationException($"{Sdk} reader ({_program} {string.Join(' ', _leading.Select(Path.GetFileName))}) exited {code} reading {string.Join(", ", blobs)}: {stderr.Trim()}");
        }

        var downloads = new List<SdkDownload>(repetitions * blobs.Count);
        int warmupReads = 1;
        foreach (string line in stdout.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            if (line.StartsWith(WarmupLine, StringComparison.Ordinal))
            {
                warmupReads = int.Parse(line[WarmupLine.Length..], CultureInfo.InvariantCulture);
                continue;
            }

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

        return new SdkBatch(downloads, warmupReads);
    }

    private static async Task<(int Code, string Stdout, string Stderr)> RunAsync(string program, IEnumerable<string> arguments, CancellationToken cancellationToken)
    {
        ProcessRun run = await ProcessRun.RunAsync(program, arguments, BatchTimeout, cancellationToken: cancellationToken);
        return (run.ExitCode, run.Stdout, run.Stderr);
    }
}
