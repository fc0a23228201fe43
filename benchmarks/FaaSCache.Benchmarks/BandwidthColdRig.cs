using System.Net.Http.Json;

namespace FaaSCache.Benchmarks;

/// <summary>
/// The <c>scaled_cold</c> rig: the scale controller (<c>src/ScaleController/FaaSCache.ScaleController</c>, Release) as a
/// process with <c>--netns --link-rate 90000000</c> and one instance at least, so the requester's planner can ask it
/// for more instances (its urgent vote) and they start while the requester already downloads. The controller measures
/// T_Load as its instances' launch-to-ready time and passes it to them in its vote polls. Dispose sends SIGTERM (the
/// controller drains its instances and removes its namespaces), kills what is left, and removes the namespaces and
/// shared-memory folders of a controller that did not get to it.
/// </summary>
internal sealed class BandwidthColdRig : IAsyncDisposable
{
    /// <summary>The controller's namespace prefix (distinct from <see cref="BandwidthRig.Prefix"/>).</summary>
    public const string Prefix = "fcbwc";

    private static readonly TimeSpan StopTimeout = TimeSpan.FromSeconds(90);
    private static readonly CultureInfo Invariant = CultureInfo.InvariantCulture;
    private readonly Process _process;
    private readonly StringBuilder _output = new();
    private readonly Lock _gate = new();
    private readonly TempShmDirectory _shm;
    private readonly HttpClient _status;

    private BandwidthColdRig(Process process, TempShmDirectory shm, int port)
    {
        _process = process;
        _shm = shm;
        _status = new HttpClient(new SocketsHttpHandler { UseProxy = false }) { BaseAddress = new Uri($"http://127.0.0.1:{port.ToString(Invariant)}/"), Timeout = TimeSpan.FromSeconds(10) };
        process.OutputDataReceived += (_, e) => Append(e.Data);
        process.ErrorDataReceived += (_, e) => Append(e.Data);
    }

    /// <summary>Gets the controller's process id.</summary>
    public int ProcessId => _process.Id;

    /// <summary>Gets the last lines the controller printed.</summary>
    public string OutputTail
    {
        get
        {
            lock (_gate)
            {
                string[] lines = _output.ToString().Split('\n');
                return string.Join('\n', lines.Skip(Math.Max(0, lines.Length - 30)));
            }
        }
    }

    /// <summary>Starts the controller for the app in <paramref name="appDirectory"/> with at least one instance.</summary>
    public static async Task<BandwidthColdRig> StartAsync(string appDirectory, string appName, AzuriteServer azurite, long linkRate, int maxInstances, CancellationToken cancellationToken)
    {
        await NetworkNamespace.CleanupAsync(Prefix);
        string root = RepositoryRoot.Find();
        string dll = Path.Combine(root, "src", "ScaleController", "FaaSCache.ScaleController", "bin", "Release", "net10.0", "FaaSCache.ScaleController.dll");
        if (!File.Exists(dll))
        {
            throw new FileNotFoundException($"the scale controller is not built: '{dll}' is missing (benchmarks/run builds it)", dll);
        }

        int port = FreePorts.Get();
        int grpcPort = FreePorts.Get();
        var shm = new TempShmDirectory("faascache-bench-cold");
        var start = new ProcessStartInfo("dotnet")
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            WorkingDirectory = appDirectory,
        };
        foreach (string arg in (string[])[
            dll, "--script-root", appDirectory, "--app-name", appName, "--storage", azurite.ConnectionString,
            "--min-instances", "1", "--max-instances", maxInstances.ToString(Invariant), "--poll-interval", "1",
            "--scale-out-cooldown", "0", "--scale-in-cooldown", "1", "--idle-to-zero", "2",
            "--host-dll", FaaSCacheHostProcess.FindHostDll(), "--listen-address", "0.0.0.0",
            "--port", port.ToString(Invariant), "--grpc-port", grpcPort.ToString(Invariant), "--shm-root", shm.Path,
            "--netns", "--link-rate", linkRate.ToString(Invariant), "--netns-prefix", Prefix, "--auth", "off"])
        {
            start.ArgumentList.Add(arg);
        }

        var rig = new BandwidthColdRig(new Process { StartInfo = start, EnableRaisingEvents = true }, shm, port);
        try
        {
            rig._process.Start();
            rig._process.BeginOutputReadLine();
            rig._process.BeginErrorReadLine();
            return rig;
        }
        catch
        {
            await rig.DisposeAsync();
            throw;
        }
    }

    /// <summary>
    /// Waits until exactly one instance is ready, T_Load is measured, and that instance lists itself alone (so it owns
    /// every key and a miss there is a fresh one); returns a client for it.
    /// </summary>
    public async Task<ColdInstance> WaitForOneAsync(TimeSpan timeout, CancellationToken cancellationToken)
    {
        var clock = Stopwatch.StartNew();
        string last = "no answer yet";
        while (clock.Elapsed < timeout)
        {
            cancellationToken.ThrowIfCancellationRequested();
            if (_process.HasExited)
            {
                throw new InvalidOperationException($"the scale controller exited with code {_process.ExitCode.ToString(Invariant)}:{Environment.NewLine}{OutputTail}");
            }

            try
            {
                ColdStatus status = (await _status.GetFromJsonAsync<ColdStatus>("scale/status", cancellationToken))!;
                List<ColdInstanceStatus> live = [.. status.Instances.Where(i => i.State is not ("stopped" or "failed"))];
                last = $"{status.Current.ToString(Invariant)} instance(s) ({string.Join(", ", live.Select(i => $"{i.Id} {i.State}"))}), T_Load {status.InstanceLoadSeconds?.ToString("0.00 s", Invariant) ?? "not measured"}: {status.Reason}";
                if (live.Count == 1 && live[0].State == "ready" && live[0].HttpEndpoint is { } endpoint && status.InstanceLoadSeconds is not null)
                {
                    var http = new HttpClient(new SocketsHttpHandler { UseProxy = false }) { BaseAddress = endpoint, Timeout = TimeSpan.FromMinutes(5) };
                    HostStatus host = (await http.GetFromJsonAsync<HostStatus>("admin/host/status", cancellationToken))!;
                    if (host.MemberIds.Count == 1)
                    {
                        return new ColdInstance(live[0].Id, http, status.InstanceLoadSeconds.Value);
                    }

                    last += $"; {live[0].Id} still lists {string.Join(", ", host.MemberIds)}";
                    http.Dispose();
                }
            }
            catch (Exception e) when (e is HttpRequestException or System.Text.Json.JsonException || (e is TaskCanceledException && !cancellationToken.IsCancellationRequested))
            {
                last = e.Message;
            }

            await Task.Delay(TimeSpan.FromMilliseconds(500), cancellationToken);
        }

        throw new TimeoutException($"the scale controller did not come to one ready instance within {timeout.TotalSeconds:0} s ({last}){Environment.NewLine}{OutputTail}");
    }

    /// <summary>The controller's instances and the reason of its last decision, as one line (for the benchmark's log).</summary>
    public async Task<string> StatusLineAsync(CancellationToken cancellationToken)
    {
        try
        {
            ColdStatus status = (await _status.GetFromJsonAsync<ColdStatus>("scale/status", cancellationToken))!;
            IEnumerable<string> changes = (status.Decisions ?? []).Where(d => d.From != d.To).TakeLast(4)
                .Select(d => $"{d.At:HH:mm:ss} {d.Trigger} {d.From.ToString(Invariant)}->{d.To.ToString(Invariant)} ({d.Reason})");
            return $"{status.Current.ToString(Invariant)} instance(s) ({string.Join(", ", status.Instances.Select(i => $"{i.Id} {i.State}"))}): {status.Reason}; " +
                $"its last changes: {string.Join(" | ", changes)}";
        }
        catch (Exception e) when (e is HttpRequestException or System.Text.Json.JsonException || (e is TaskCanceledException && !cancellationToken.IsCancellationRequested))
        {
            return $"no status ({e.Message})";
        }
    }

    /// <summary>Stops the controller with SIGTERM (it drains and stops its instances and removes its namespaces).</summary>
    public async ValueTask DisposeAsync()
    {
        _status.Dispose();
        try
        {
            if (!_process.HasExited)
            {
                ProcessSignals.Send(_process.Id, ProcessSignals.Terminate);
                using var wait = new CancellationTokenSource(StopTimeout);
                await _process.WaitForExitAsync(wait.Token);
            }
        }
        catch (Exception e) when (e is InvalidOperationException or OperationCanceledException)
        {
            // Killed below.
        }
        finally
        {
            try
            {
                if (!_process.HasExited)
                {
                    _process.Kill(entireProcessTree: true);
                }
            }
            catch (InvalidOperationException)
            {
                // Exited meanwhile.
            }

            _process.Dispose();
            await NetworkNamespace.CleanupAsync(Prefix);
            _shm.Dispose();
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
            if (_output.Length < 1 << 20)
            {
                _output.AppendLine(line);
            }
        }
    }
}

/// <summary>The controller's one instance: its id, an HTTP client on its admin port, and T_Load as the controller measured it.</summary>
internal sealed record ColdInstance(string Id, HttpClient Http, double InstanceLoadSeconds);

/// <summary>The part of the controller's <c>GET /scale/status</c> the benchmark reads.</summary>
internal sealed record ColdStatus(int Current, string Reason, double? InstanceLoadSeconds, IReadOnlyList<ColdInstanceStatus> Instances, IReadOnlyList<ColdDecision>? Decisions = null);

/// <summary>One decision in the controller's history.</summary>
internal sealed record ColdDecision(DateTimeOffset At, string Trigger, int From, int To, string Reason);

/// <summary>One instance in the controller's status.</summary>
internal sealed record ColdInstanceStatus(string Id, string State, Uri? HttpEndpoint);
