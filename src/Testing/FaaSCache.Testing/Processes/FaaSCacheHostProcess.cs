using System.Net.Http.Json;

namespace FaaSCache.Testing;

/// <summary>
/// The built FaaSCache host (<c>dotnet FaaSCache.Host.dll start --script-root &lt;app&gt; --port &lt;p&gt;</c>) as a
/// real process on a free loopback port, with <c>AzureWebJobsStorage</c> and
/// <c>FUNCTIONS_UNIX_SHARED_MEMORY_DIRECTORIES</c> set in its environment and its stdout/stderr captured.
/// <see cref="StopAsync"/> sends SIGTERM and waits for a clean exit; dispose kills the host, its workers
/// and anything else it started, if still running (and, failing that, so does the test process's exit).
/// A test project (or benchmark) that uses this references the host project (<c>FaaSCache.Host.csproj</c>), so that
/// <c>dotnet test</c> builds the host DLL in the same configuration first.
/// </summary>
public sealed partial class FaaSCacheHostProcess : IAsyncDisposable
{
    /// <summary>The environment variable that may name the host DLL to run instead of the built one.</summary>
    public const string HostDllVariable = "FAASCACHE_HOST_DLL";

    public static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(60);
    public static readonly TimeSpan StopTimeout = TimeSpan.FromSeconds(30);
    public static readonly TimeSpan WorkerTimeout = TimeSpan.FromSeconds(60);

    private const int MaxCapturedChars = 4 * 1024 * 1024;
    private static readonly TimeSpan ProbeTimeout = TimeSpan.FromSeconds(5);
    private static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web);

    private readonly Process _process;
    private readonly StringBuilder _output = new();
    private readonly Lock _gate = new();
    private readonly HashSet<int> _workerPids = [];
    private readonly OwnedProcess _owned;
    private readonly Task _exited;
    private int _disposed;

    private FaaSCacheHostProcess(Process process, int port, System.Net.IPAddress? address = null, string? masterKey = null)
    {
        _process = process;
        Port = port;
        MasterKey = masterKey;
        BaseUri = new Uri($"http://{address ?? System.Net.IPAddress.Loopback}:{port.ToString(CultureInfo.InvariantCulture)}/");
        Http = new HttpClient { BaseAddress = BaseUri, Timeout = TimeSpan.FromSeconds(120) };
        if (masterKey is not null)
        {
            // The harness's own calls (status, invocations) carry the master key; a test sends requests without it itself.
            Http.DefaultRequestHeaders.Add("x-functions-key", masterKey);
        }
        _owned = OwnedProcess.Start(process, Append, Append);
        ProcessId = process.Id;
        _exited = process.WaitForExitAsync();
    }

    /// <summary>Gets the master key the host enforces (<c>--auth on</c>), which <see cref="Http"/> sends; null when keys are off.</summary>
    public string? MasterKey { get; }

    /// <summary>Gets the HTTP port (<c>--port</c>).</summary>
    public int Port { get; }

    /// <summary>Gets <c>http://127.0.0.1:&lt;port&gt;/</c> (or the <see cref="HostNetwork"/>'s address).</summary>
    public Uri BaseUri { get; }

    /// <summary>Gets a client whose base address is <see cref="BaseUri"/> (120 s timeout).</summary>
    public HttpClient Http { get; }

    /// <summary>Gets the host's process id.</summary>
    public int ProcessId { get; }

    /// <summary>Gets a value indicating whether the host has exited.</summary>
    public bool HasExited => _exited.IsCompleted;

    /// <summary>Gets the exit code once the host has exited.</summary>
    public int? ExitCode => _exited.IsCompleted ? _process.ExitCode : null;

    /// <summary>Gets what the host printed so far (stdout and stderr interleaved, first 4 M characters).</summary>
    public string Output
    {
        get
        {
            lock (_gate)
            {
                return _output.ToString();
            }
        }
    }

    /// <summary>Finds the built host DLL: <c>src/Host.Cache/FaaSCache.Host/bin/&lt;Configuration&gt;/net10.0/FaaSCache.Host.dll</c>.</summary>
    public static string FindHostDll()
    {
        string? overridden = Environment.GetEnvironmentVariable(HostDllVariable);
        if (!string.IsNullOrEmpty(overridden))
        {
            return File.Exists(overridden) ? overridden : throw new FileNotFoundException($"{HostDllVariable} names '{overridden}', which does not exist.", overridden);
        }

        // TestSupport is built in the same configuration as the test project that references it and the host.
        string configuration = typeof(FaaSCacheHostProcess).Assembly.GetCustomAttribute<AssemblyConfigurationAttribute>()?.Configuration is { Length: > 0 } c ? c : "Debug";
        string dll = Path.Combine(RepositoryRoot.Find(), "src", "Host.Cache", "FaaSCache.Host", "bin", configuration, "net10.0", "FaaSCache.Host.dll");
        return File.Exists(dll)
            ? dll
            : throw new FileNotFoundException(
                $"The FaaSCache host is not built: '{dll}' is missing. Reference src/Host.Cache/FaaSCache.Host/FaaSCache.Host.csproj from the test project " +
                $"(dotnet test then builds it) or run `dotnet build src/Host.Cache/FaaSCache.Host -c {configuration}`.",
                dll);
    }

    /// <summary>
    /// Finds the built <c>faascache</c> tool beside the host, in the same configuration:
    /// <c>src/Tools/FaaSCache.Tools/bin/&lt;Configuration&gt;/net10.0/faascache.dll</c>.
    /// </summary>
    public static string FindToolDll()
    {
        string configuration = typeof(FaaSCacheHostProcess).Assembly.GetCustomAttribute<AssemblyConfigurationAttribute>()?.Configuration is { Length: > 0 } c ? c : "Debug";
        string dll = Path.Combine(RepositoryRoot.Find(), "src", "Tools", "FaaSCache.Tools", "bin", configuration, "net10.0", "faascache.dll");
        return File.Exists(dll)
            ? dll
            : throw new FileNotFoundException(
                $"The faascache tool is not built: '{dll}' is missing. Reference src/Tools/FaaSCache.Tools/FaaSCache.Tools.csproj from the test project or run `dotnet build src/Tools/FaaSCache.Tools -c {configuration}`.",
                dll);
    }

    /// <summary>
    /// Starts the host for the app in <paramref name="appDirectory"/> and waits (at most <see cref="StartTimeout"/>) until
    /// <c>/admin/host/status</c> answers. Workers may still be starting: see <see cref="WaitForWorkersAsync"/>.
    /// </summary>
    /// <param name="appDirectory">The function app folder (<c>--script-root</c>).</param>
    /// <param name="storageConnection">The <c>AzureWebJobsStorage</c> environment variable (wins over local.settings.json).</param>
    /// <param name="shmRoot">The <c>FUNCTIONS_UNIX_SHARED_MEMORY_DIRECTORIES</c> environment variable (maps go to &lt;root&gt;/AzureFunctions).</param>
    /// <param name="cache"><c>--cache on</c> or <c>off</c>.</param>
    /// <param name="extraArgs">More options, e.g. <c>{"--blob-poll-interval": "0.5"}</c>.</param>
    /// <param name="environment">More environment variables for the host (and so its workers).</param>
    /// <param name="network">Where the host runs (e.g. a network namespace) and listens; null: loopback of this namespace.</param>
    /// <param name="cancellationToken">Cancellation.</param>
    public static async Task<FaaSCacheHostProcess> StartAsync(
        string appDirectory,
        string storageConnection,
        string shmRoot,
        bool cache = true,
        IDictionary<string, string>? extraArgs = null,
        IDictionary<string, string>? environment = null,
        HostNetwork? network = null,
        CancellationToken cancellationToken = default)
    {
        var recipe = new ServerStarter.Recipe<FaaSCacheHostProcess>(
            "The FaaSCache host",
            port =>
            {
                var args = new Dictionary<string, string>(extraArgs ?? new Dictionary<string, string>(), StringComparer.Ordinal)
                {
                    ["--port"] = port.ToString(CultureInfo.InvariantCulture),
                    ["--cache"] = cache ? "on" : "off",
                };
                if (network is not null)
                {
                    // HTTP and peers on the network's own address: the only one reachable from outside it.
                    args["--listen-address"] = network.Address.ToString();
                    args["--peer-address"] = network.Address.ToString();
                }

                return Launch(appDirectory, network?.StorageConnection ?? storageConnection, shmRoot, port, args, environment, network);
            },
            (host, token) => host.AnswersAsync(token),
            host => host.HasExited,
            host => host.Output,
            host => host.ExitCode,
            ["cannot listen on port"]);
        return await ServerStarter.StartAsync(recipe, StartTimeout, cancellationToken);
    }

    /// <summary>
    /// Runs the host for the app in <paramref name="appDirectory"/> and waits for it to exit by itself (for start-ups
    /// that must fail); kills it and throws <see cref="TimeoutException"/> when it is still running after <paramref name="timeout"/>.
    /// </summary>
    public static async Task<HostRun> RunToExitAsync(
        string appDirectory,
        string storageConnection,
        string shmRoot,
        TimeSpan timeout,
        IDictionary<string, string>? extraArgs = null,
        IDictionary<string, string>? environment = null)
    {
        int port = FreePorts.Get();
        var args = new Dictionary<string, string>(extraArgs ?? new Dictionary<string, string>(), StringComparer.Ordinal)
        {
            ["--port"] = port.ToString(CultureInfo.InvariantCulture),
        };
        await using FaaSCacheHostProcess host = Launch(appDirectory, storageConnection, shmRoot, port, args, environment);
        if (await host.WaitForExitAsync(timeout) is not int code)
        {
            throw new TimeoutException($"The FaaSCache host was still running after {timeout.TotalSeconds:0} s.{Environment.NewLine}Host output:{Environment.NewLine}{host.Output}");
        }

        return new HostRun(code, host.Output);
    }

    /// <summary>Waits at most <paramref name="timeout"/> for the host to exit; returns its exit code, or null if it still runs.</summary>
    public async Task<int?> WaitForExitAsync(TimeSpan timeout)
    {
        await Task.WhenAny(_exited, Task.Delay(timeout));
        if (!_exited.IsCompleted)
        {
            return null;
        }

        // Let the output readers drain the last lines.
        using var drain = new CancellationTokenSource(TimeSpan.FromSeconds(5));
        try
        {
            await _process.WaitForExitAsync(drain.Token);
        }
        catch (OperationCanceledException)
        {
        }

        return _process.ExitCode;
    }

    /// <summary>
    /// Sends SIGTERM (as Ctrl+C / a container stop does) and waits at most <paramref name="timeout"/> (default
    /// <see cref="StopTimeout"/>) for the host to exit; returns its exit code.
    /// </summary>
    public async Task<int> StopAsync(TimeSpan? timeout = null)
    {
        if (!HasExited)
        {
            try
            {
                ProcessSignals.Send(ProcessId, ProcessSignals.Terminate);
            }
            catch (InvalidOperationException) when (HasExited)
            {
                // It exited between the check and the signal.
            }
        }

        TimeSpan limit = timeout ?? StopTimeout;
        return await WaitForExitAsync(limit)
            ?? throw new TimeoutException($"The FaaSCache host (pid {ProcessId}) did not exit within {limit.TotalSeconds:0} s of SIGTERM.{Environment.NewLine}Host output:{Environment.NewLine}{Output}");
    }

    /// <summary>
    /// Sends SIGKILL to the host process only, at once (no helper process, as a crash would): its workers are left to
    /// notice by themselves, and dispose still ends any that outlive it. Does nothing when the host has exited.
    /// </summary>
    public void Kill()
    {
        try
        {
            if (!_process.HasExited)
            {
                _process.Kill(entireProcessTree: false);
            }
        }
        catch (Exception e) when (e is InvalidOperationException or System.ComponentModel.Win32Exception)
        {
            // Exited between the check and the kill.
        }
    }

    /// <summary>Kills the host's process tree if it still runs, and any worker it reported that outlived it.</summary>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        try
        {
            await _owned.DisposeAsync();
        }
        finally
        {
            KillOrphanedWorkers();
            Http.Dispose();
        }
    }

    private static FaaSCacheHostProcess Launch(
        string appDirectory,
        string storageConnection,
        string shmRoot,
        int port,
        Dictionary<string, string> args,
        IDictionary<string, string>? environment,
        HostNetwork? network = null)
    {
        string dll = FindHostDll();
        string dotnet = Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } hostPath && File.Exists(hostPath) ? hostPath : "dotnet";
        ProcessStartInfo start = OwnedProcess.StartInfo(dotnet, appDirectory);
        start.ArgumentList.Add(dll);
        start.ArgumentList.Add("start");
        start.ArgumentList.Add("--script-root");
        start.ArgumentList.Add(appDirectory);
        foreach ((string name, string value) in args)
        {
            start.ArgumentList.Add(name);
            start.ArgumentList.Add(value);
        }

        string? masterKey = null;
        if (!args.TryGetValue("--auth", out string? auth))
        {
            // As func start does for local development: tests that check keys pass --auth on.
            start.ArgumentList.Add("--auth");
            start.ArgumentList.Add("off");
        }
        else if (auth == "on")
        {
            string secrets = environment is not null && environment.TryGetValue("FUNCTIONS_SECRETS_PATH", out string? path) ? path : Path.Combine(appDirectory, ".faascache", "secrets");
            masterKey = HostKeyFiles.EnsureMasterKey(secrets);
        }

        start.Environment["AzureWebJobsStorage"] = storageConnection;
        start.Environment["FUNCTIONS_UNIX_SHARED_MEMORY_DIRECTORIES"] = shmRoot;
        start.Environment["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1";
        foreach ((string name, string value) in environment ?? new Dictionary<string, string>())
        {
            start.Environment[name] = value;
        }

        return new FaaSCacheHostProcess(new Process { StartInfo = network?.Wrap(start) ?? start, EnableRaisingEvents = true }, port, network?.Address, masterKey);
    }

    private void ThrowIfExited(string doing)
    {
        if (HasExited)
        {
            throw new InvalidOperationException($"The FaaSCache host exited with code {_process.ExitCode} {doing}.{Environment.NewLine}Host output:{Environment.NewLine}{Output}");
        }
    }

    private void KillOrphanedWorkers()
    {
        int[] pids;
        lock (_gate)
        {
            pids = [.. _workerPids];
        }

        foreach (int pid in pids)
        {
            try
            {
                // Only a worker the host started: its command line carries the host's worker-id argument.
                string cmdline = File.ReadAllText($"/proc/{pid.ToString(CultureInfo.InvariantCulture)}/cmdline");
                if (cmdline.Contains("--functions-worker-id", StringComparison.Ordinal))
                {
                    using Process worker = Process.GetProcessById(pid);
                    ProcessTree.Kill(worker);
                }
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException or ArgumentException or InvalidOperationException)
            {
                // Gone already.
            }
        }
    }

    private void Append(string? line)
    {
        if (line is null)
        {
            return;
        }

        lock (_gate)
        {
            if (_output.Length < MaxCapturedChars)
            {
                _output.AppendLine(line);
            }
        }
    }
}

/// <summary>How a host run that was expected to end by itself ended.</summary>
/// <param name="ExitCode">The exit code.</param>
/// <param name="Output">Everything it printed (stdout and stderr).</param>
public sealed record HostRun(int ExitCode, string Output);
