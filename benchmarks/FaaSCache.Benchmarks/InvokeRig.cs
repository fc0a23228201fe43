using System.Text.Json.Nodes;
namespace FaaSCache.Benchmarks;

/// <summary>
/// One function of the bench apps (<c>benchmarks/apps/&lt;language&gt;</c>): an HTTP trigger on
/// <c>/api/&lt;route&gt;/{name}</c> with the blob input <c>bench/{name}</c>, answering with the blob's
/// length and first and last byte.
/// </summary>
/// <param name="Language">python or node (the CSV's <c>language</c>).</param>
/// <param name="Name">The function's folder.</param>
/// <param name="Route">The route's first segment.</param>
/// <param name="Access">How the function reads its input, for the tables.</param>
/// <param name="CsvFileName">The CSV its rows go to (none for the no-input baseline).</param>
internal sealed record BenchFunction(string Language, string Name, string Route, string Access, string? CsvFileName)
{
    public string Label => $"{Language} {Access}";
}

/// <summary>One input blob: <c>bench/input-&lt;size&gt;</c> of random bytes, with the bytes a function must answer.</summary>
internal sealed record InputBlob(string BlobName, long Size, byte First, byte Last)
{
    /// <summary>Gets the bytes, kept only when a floor series sends them itself.</summary>
    public byte[]? Data { get; init; }

    public string Key => $"{InvokeRig.ContainerName}/{BlobName}";
}

/// <summary>
/// The systems under test for <c>invoke</c>: per language (Python, Node) one FaaSCache host with the cache on
/// and one with it off (<c>--cache off</c>: blob bytes inside the gRPC message, as the stock host sends them),
/// each running a copy of <c>benchmarks/apps/&lt;language&gt;</c> against the same Azurite, each with its own
/// shared-memory root.
/// </summary>
internal sealed partial class InvokeRig : IAsyncDisposable
{
    public const string ContainerName = "bench";
    public const string Vanilla = "vanilla";
    public const string LocalMiss = "lm";
    public const string LocalHit = "lh";

    /// <summary>The baseline: the same HTTP invocation on the cache-on host, without a blob input.</summary>
    public const string NoInput = "no input";

    /// <summary>Canonical path order (tables and CSV).</summary>
    public static readonly string[] PathNames = [Vanilla, LocalMiss, LocalHit];

    /// <summary>
    /// The functions measured, in table order. The first of each language goes to invoke.csv. A "language" is an app of
    /// <c>benchmarks/apps/</c>: python and node (function.json models), python-v2 and node-v4 (today's models, indexed by
    /// the worker), with the same functions, routes and answers.
    /// </summary>
    public static readonly BenchFunction[] Functions =
    [
        new("python", "TouchStream", "stream", "InputStream read(1), seek, read(1)", "invoke.csv"),
        new("python", "ReadAll", "read", "InputStream read() of all", "invoke-python-read.csv"),
        new("python-v2", "TouchStream", "stream", "InputStream read(1), seek, read(1)", "invoke.csv"),
        new("python-v2", "ReadAll", "read", "InputStream read() of all", "invoke-python-read.csv"),
        new("node", "Touch", "touch", "Buffer [0] and [length-1]", "invoke.csv"),
        new("node-v4", "Touch", "touch", "Buffer [0] and [length-1]", "invoke.csv"),
        new("dotnet-isolated", "Touch", "touch", "byte[] [0] and [^1] (bytes in the message)", "invoke.csv"),
    ];

    /// <summary>The baseline of each language: an HTTP trigger without a blob input, same request and answer shape.</summary>
    public static readonly BenchFunction[] Baselines =
    [
        new("python", "Ping", "ping", "no blob input", null),
        new("python-v2", "Ping", "ping", "no blob input", null),
        new("node", "Ping", "ping", "no blob input", null),
        new("node-v4", "Ping", "ping", "no blob input", null),
        new("dotnet-isolated", "Ping", "ping", "no blob input", null),
    ];

    /// <summary>Every app the rig can run.</summary>
    public static readonly string[] AllLanguages = ["python", "python-v2", "node", "node-v4", "dotnet-isolated"];

    /// <summary>The environment variable naming the languages to run (comma separated, e.g. <c>node,node-v4</c>); unset: all.</summary>
    public const string LanguagesVariable = "FAASCACHE_INVOKE_LANGUAGES";

    /// <summary>The environment variable naming the apps' consistency preset (host.json's <c>consistency</c>); unset: the default, <c>strong</c>.</summary>
    public const string ConsistencyVariable = "FAASCACHE_INVOKE_CONSISTENCY";

    /// <summary>Gets the preset <see cref="ConsistencyVariable"/> names, or null for the apps' own host.json.</summary>
    public static string? Consistency => Environment.GetEnvironmentVariable(ConsistencyVariable) is { Length: > 0 } preset ? preset : null;

    /// <summary>Writes <see cref="Consistency"/> into the app's host.json, when it is set (the host validates the value).</summary>
    private static void SetConsistencyFromEnvironment(FunctionAppFolder app)
    {
        if (Consistency is not { } preset)
        {
            return;
        }

        string hostJson = Path.Combine(app.Path, "host.json");
        JsonObject json = JsonNode.Parse(File.ReadAllText(hostJson)) as JsonObject ?? throw new InvalidDataException($"{hostJson} is not a JSON object.");
        BenchAppFolder.SetFaaSCache(json, "consistency", preset);
        File.WriteAllText(hostJson, json.ToJsonString());
    }

    /// <summary>The languages <see cref="LanguagesVariable"/> names, in <see cref="AllLanguages"/>' order; all when it is unset.</summary>
    /// <exception cref="ArgumentException">It names a language that is not one of <see cref="AllLanguages"/>.</exception>
    public static IReadOnlyList<string> LanguagesFromEnvironment()
    {
        string? named = Environment.GetEnvironmentVariable(LanguagesVariable);
        if (string.IsNullOrWhiteSpace(named))
        {
            return AllLanguages;
        }

        string[] asked = [.. named.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)];
        string[] unknown = [.. asked.Except(AllLanguages, StringComparer.Ordinal)];
        if (unknown.Length > 0)
        {
            throw new ArgumentException($"{LanguagesVariable}={named}: unknown language(s) {string.Join(", ", unknown)}; allowed: {string.Join(", ", AllLanguages)}.");
        }

        return [.. AllLanguages.Where(asked.Contains)];
    }

    /// <summary>The floor of a worker without shared memory: the bytes in a bare FunctionRpc message to it (<see cref="RpcFloor"/>).</summary>
    public const string Floor = "floor";

    private readonly List<FunctionAppFolder> _apps;
    private readonly List<BenchHost> _hosts;
    private readonly BlobContainerClient _container;

    private InvokeRig(List<FunctionAppFolder> apps, List<BenchHost> hosts, BlobContainerClient container, RpcFloor? floor)
    {
        _apps = apps;
        _hosts = hosts;
        _container = container;
        FloorWorker = floor;
    }

    /// <summary>Gets the floor's worker (a second .NET isolated worker fed by a bare FunctionRpc server), when dotnet-isolated runs.</summary>
    public RpcFloor? FloorWorker { get; }

    public IReadOnlyList<BenchHost> Hosts => _hosts;

    /// <summary>
    /// Copies the bench apps, starts the hosts (in parallel: per language one with the cache on and, with
    /// <paramref name="vanilla"/>, one with it off) and waits until their workers are ready.
    /// </summary>
    /// <param name="azurite">The storage.</param>
    /// <param name="vanilla">Also start the cache-off hosts.</param>
    /// <param name="environment">More environment variables for the hosts (and so their workers) of a language, or null.</param>
    /// <param name="languages">The apps to run (default <see cref="AllLanguages"/>).</param>
    /// <param name="cancellationToken">Cancellation.</param>
    public static async Task<InvokeRig> CreateAsync(
        AzuriteServer azurite,
        bool vanilla = true,
        Func<string, IDictionary<string, string>?>? environment = null,
        IReadOnlyList<string>? languages = null,
        CancellationToken cancellationToken = default)
    {
        var apps = new List<FunctionAppFolder>();
        var hosts = new List<BenchHost>();
        try
        {
            BlobContainerClient container = azurite.CreateServiceClient().GetBlobContainerClient(ContainerName);
            await container.CreateIfNotExistsAsync(cancellationToken: cancellationToken);

            var starting = new List<Task<BenchHost>>();
            foreach (string language in languages ?? AllLanguages)
            {
                // A C# isolated app runs from its build output (as func start does), linked, not copied.
                FunctionAppFolder app = language == "dotnet-isolated" ? DotnetBuildOutput.Link("benchmarks", "apps", "dotnet-isolated") : BenchAppFolder.Copy(language);
                apps.Add(app);
                SetConsistencyFromEnvironment(app);
                IDictionary<string, string>? variables = environment?.Invoke(language);
                starting.Add(StartHostAsync(language, cache: true, app, azurite, variables, cancellationToken));
                if (vanilla)
                {
                    starting.Add(StartHostAsync(language, cache: false, app, azurite, variables, cancellationToken));
                }
            }

            try
            {
                await Task.WhenAll(starting);
            }
            finally
            {
                // Keep every host that did start, so a failure of another still stops it.
                hosts.AddRange(starting.Where(t => t.IsCompletedSuccessfully).Select(t => t.Result));
            }

            RpcFloor? floor = hosts.Any(h => h.Language == "dotnet-isolated")
                ? await RpcFloor.StartAsync(DotnetBuildOutput.Find("benchmarks", "apps", "dotnet-isolated"), "bench-dotnet-isolated.dll", "Touch", azurite.ConnectionString, cancellationToken)
                : null;
            return new InvokeRig(apps, hosts, container, floor);
        }
        catch
        {
            foreach (BenchHost host in hosts)
            {
                await host.DisposeAsync();
            }

            apps.ForEach(a => a.Dispose());
            throw;
        }
    }

    public BenchHost Host(string language, bool cache) => _hosts.Single(h => h.Language == language && h.Cache == cache);

    /// <summary>The Node worker's way of reading shared memory, as it logged it at start-up ("mmap (...)" or "read (...)").</summary>
    public string NodeSharedMemoryMode()
    {
        Match m = NodeModeLine().Match(Host("node", cache: true).Process.Output);
        return m.Success ? m.Groups[1].Value.Trim() : "(not logged)";
    }

    /// <summary>Uploads <c>bench/input-&lt;size&gt;</c>: random bytes from <paramref name="seed"/>.</summary>
    public async Task<InputBlob> UploadAsync(long size, int seed, CancellationToken cancellationToken)
    {
        var data = new byte[size];
        new Random(seed).NextBytes(data);
        var input = new InputBlob(string.Create(CultureInfo.InvariantCulture, $"input-{size}"), size, data[0], data[^1]) { Data = FloorWorker is null ? null : data };
        await _container.GetBlobClient(input.BlobName).UploadAsync(BinaryData.FromBytes(data), overwrite: true, cancellationToken);
        return input;
    }

    /// <summary>
    /// Every function on every path (of <paramref name="paths"/>, default all) for <paramref name="input"/>, in table
    /// order, then the baselines (on the cache-on hosts).
    /// </summary>
    public IReadOnlyList<InvokeSeries> Series(InputBlob input, IReadOnlyCollection<string>? paths = null) =>
    [
        .. Functions.Where(f => _hosts.Any(h => h.Language == f.Language)).SelectMany(f => PathNames
            .Where(p => paths is null || paths.Contains(p))
            .Select(p => new InvokeSeries(f, p, Host(f.Language, cache: p != Vanilla), input))),
        .. Baselines.Where(f => _hosts.Any(h => h.Language == f.Language)).Select(f => new InvokeSeries(f, NoInput, Host(f.Language, cache: true), input)),
        .. Functions.Where(f => f.Language == "dotnet-isolated" && FloorWorker is not null && (paths is null || paths.Contains(Floor)))
            .Select(f => new InvokeSeries(f, Floor, Host(f.Language, cache: true), input, FloorWorker)),
    ];

    /// <summary>The cachelet counters of each cache-on host.</summary>
    public async Task<Dictionary<string, CacheletCounters>> CountersAsync(CancellationToken cancellationToken)
    {
        var counters = new Dictionary<string, CacheletCounters>(StringComparer.Ordinal);
        foreach (BenchHost host in _hosts.Where(h => h.Cache))
        {
            HostStatus status = await host.Process.GetStatusAsync(cancellationToken);
            counters[host.Language] = status.Counters ?? throw new InvalidOperationException($"{host.Label}: /admin/host/status has no cache counters.");
        }

        return counters;
    }

    /// <summary>
    /// Caches the new input on each cache-on host of <paramref name="series"/> with one untimed <c>lm</c> call (which is
    /// counted as a local miss), so no <c>lh</c> call, warm-up included, ever meets an empty cache.
    /// </summary>
    public static async Task CacheInputAsync(IEnumerable<InvokeSeries> series, CancellationToken cancellationToken)
    {
        foreach (InvokeSeries first in series.Where(s => s.Path == LocalMiss).DistinctBy(s => s.Host))
        {
            await first.RunOnceAsync(cancellationToken);
        }
    }

    /// <summary>
    /// The host's own view of <paramref name="series"/>: from <c>/admin/invocations</c> (the host keeps the last 500
    /// invocations), per series, the <c>durationMs</c> of the invocations that started at or after
    /// <paramref name="since"/> (binding the inputs, the worker's round trip, storing outputs: everything but the
    /// HTTP front end) and the bytes the host copied for the input. Also checks that each input was read the way
    /// the path says (storage for vanilla, lm, lh).
    /// </summary>
    public static async Task<Dictionary<string, HostSide>> HostSideAsync(IReadOnlyList<InvokeSeries> series, DateTimeOffset since, CancellationToken cancellationToken)
    {
        var result = new Dictionary<string, HostSide>(StringComparer.Ordinal);
        foreach (var byHost in series.GroupBy(s => (s.Host, s.Function)))
        {
            (BenchHost host, BenchFunction function) = byHost.Key;
            InputBlob input = byHost.First().Input;
            IReadOnlyList<InvocationRecord> records = await host.Process.GetInvocationsAsync(function.Name, cancellationToken);
            foreach (var group in records
                         .Where(r => r.Status == "succeeded" && r.StartedAt >= since)
                         .GroupBy(r => r.Inputs.Count == 0 ? NoInput : r.Inputs[0].Key == input.Key ? r.Inputs[0].Source : "other input"))
            {
                string path = group.Key switch
                {
                    NoInput => NoInput,
                    "storage" => Vanilla,
                    "lm" => LocalMiss,
                    "lh" => LocalHit,
                    string other => throw new InvalidOperationException($"{host.Label}: an invocation of {function.Name} read its input as '{other}'."),
                };
                string name = byHost.Single(s => s.Path == path).Name;
                var durations = group.Select(r => r.DurationMs).ToList();
                var copied = group.Select(r => r.Inputs.Sum(i => i.BytesCopied)).ToList();
                result[name] = new HostSide(LatencySamples.NearestRank(durations, 50), durations.Count, copied.Min(), copied.Max());
            }
        }

        return result;
    }

    /// <summary>Stops every host with SIGTERM and reports, per host, its exit code and the maps it left behind.</summary>
    public async Task<IReadOnlyList<string>> StopHostsAsync()
    {
        var report = new List<string>();
        foreach (BenchHost host in _hosts)
        {
            (int code, int left) = await host.StopAsync();
            report.Add($"{host.Label}: exit code {code}, {left} shared-memory maps left");
        }

        return report;
    }

    public async ValueTask DisposeAsync()
    {
        if (FloorWorker is not null)
        {
            await FloorWorker.DisposeAsync();
        }

        foreach (BenchHost host in _hosts)
        {
            await host.DisposeAsync();
        }

        _apps.ForEach(a => a.Dispose());
    }

    private static async Task<BenchHost> StartHostAsync(
        string language,
        bool cache,
        FunctionAppFolder app,
        AzuriteServer azurite,
        IDictionary<string, string>? environment,
        CancellationToken cancellationToken)
    {
        var shm = new TempShmDirectory($"faascache-bench-{language}-{(cache ? "on" : "off")}");
        FaaSCacheHostProcess? process = null;
        try
        {
            process = await FaaSCacheHostProcess.StartAsync(app.Path, azurite.ConnectionString, shm.Path, cache, environment: environment, cancellationToken: cancellationToken);
            await process.WaitForWorkersAsync(cancellationToken: cancellationToken);
            return new BenchHost(language, cache, process, shm);
        }
        catch
        {
            if (process is not null)
            {
                await process.DisposeAsync();
            }

            shm.Dispose();
            throw;
        }
    }

    [GeneratedRegex(@"shared-memory inputs: ([^\r\n]*)")]
    private static partial Regex NodeModeLine();
}

/// <summary>What the host recorded for one series: p50 of its invocations' durationMs over n records, and the bytes it copied per input.</summary>
internal sealed record HostSide(double P50Ms, int N, long MinBytesCopied, long MaxBytesCopied);
