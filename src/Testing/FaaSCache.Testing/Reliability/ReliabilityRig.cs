namespace FaaSCache.Testing;

/// <summary>
/// A cluster of real host processes running <see cref="ReliabilityApp"/> under one preset against the suite's Azurite,
/// with the client operations the scenarios record and the end-of-scenario checks: maps left behind by a clean stop,
/// processes (hosts and workers) still alive after every instance stopped or was killed.
/// </summary>
public sealed class ReliabilityRig : IAsyncDisposable
{
    /// <summary>How long one client operation may take before it counts as an error with an unknown outcome.</summary>
    public static readonly TimeSpan OperationTimeout = TimeSpan.FromSeconds(60);

    /// <summary>How long processes may take to go once their host stopped or was killed.</summary>
    public static readonly TimeSpan ProcessGoneTimeout = TimeSpan.FromSeconds(20);

    private readonly FunctionAppFolder _app;
    private readonly HashSet<int> _pids = [];
    private readonly HashSet<string> _killed = new(StringComparer.Ordinal);

    private ReliabilityRig(FunctionAppFolder app, HostProcessCluster cluster, BlobContainerClient container)
    {
        _app = app;
        Cluster = cluster;
        Container = container;
    }

    /// <summary>Gets the host processes.</summary>
    public HostProcessCluster Cluster { get; }

    /// <summary>Gets the container the registers live in.</summary>
    public BlobContainerClient Container { get; }

    /// <summary>Starts <paramref name="instances"/> instances under <paramref name="preset"/> with a container and app name of their own.</summary>
    public static async Task<ReliabilityRig> StartAsync(
        AzuriteServer azurite,
        string preset,
        int instances,
        TextWriter log,
        CancellationToken cancellation,
        Func<int, HostNetwork>? network = null,
        string? storageConnection = null)
    {
        string suffix = Guid.NewGuid().ToString("N")[..8];
        BlobContainerClient container = azurite.CreateServiceClient().GetBlobContainerClient($"reg-{suffix}");
        await container.CreateIfNotExistsAsync(cancellationToken: cancellation);
        FunctionAppFolder app = ReliabilityApp.Build(container.Name, preset);
        try
        {
            HostProcessCluster cluster = await HostProcessCluster.StartAsync(
                app.Path, storageConnection ?? azurite.ConnectionString, $"rel-{suffix}", instances, line => log.WriteLine($"  {line}"), network, cancellation);
            var rig = new ReliabilityRig(app, cluster, container);
            await rig.TrackProcessesAsync(cancellation);
            return rig;
        }
        catch
        {
            app.Dispose();
            throw;
        }
    }

    /// <summary>Records the pids of every running host and worker, to check at the end that none outlives the scenario.</summary>
    public async Task TrackProcessesAsync(CancellationToken cancellation)
    {
        foreach (ClusterInstance instance in Cluster.Instances.Where(i => !i.Host.HasExited))
        {
            _pids.Add(instance.Host.ProcessId);
            try
            {
                HostStatus status = await instance.Host.GetStatusAsync(cancellation);
                _pids.UnionWith(status.Workers.Where(w => w.Pid > 0).Select(w => w.Pid));
            }
            catch (HttpRequestException)
            {
                // Unreachable (partitioned or dying): its host pid is tracked, its workers were tracked earlier.
            }
        }
    }

    /// <summary>SIGKILLs <paramref name="instance"/>'s host (its workers are left to notice, as after a crash).</summary>
    public void Kill(ClusterInstance instance)
    {
        _killed.Add(instance.Id);
        instance.Host.Kill();
    }

    /// <summary>Writes <paramref name="value"/> (with a payload of <paramref name="payloadBytes"/>) to register <paramref name="key"/> through <paramref name="instance"/>.</summary>
    public static Task<RegisterOp> WriteAsync(ClusterInstance instance, string key, string value, int payloadBytes, ReliabilityRow row, RegisterHistory? history, CancellationToken cancellation)
        => WriteAsync(instance.Host, instance.Id, key, value, payloadBytes, row, history, cancellation);

    /// <summary>Reads register <paramref name="key"/> through <paramref name="instance"/>; a body whose payload disagrees with its first line counts as a partial read.</summary>
    public static Task<RegisterOp> ReadAsync(ClusterInstance instance, string key, ReliabilityRow row, RegisterHistory? history, CancellationToken cancellation)
        => ReadAsync(instance.Host, instance.Id, key, row, history, cancellation);

    /// <summary>Writes <paramref name="value"/> to register <paramref name="key"/> through the host <paramref name="host"/> (<paramref name="id"/> names it).</summary>
    public static async Task<RegisterOp> WriteAsync(FaaSCacheHostProcess host, string id, string key, string value, int payloadBytes, ReliabilityRow row, RegisterHistory? history, CancellationToken cancellation)
    {
        byte[] body = ReliabilityValue.Encode(value, payloadBytes);
        long invoked = Stopwatch.GetTimestamp();
        (bool ok, string answer) = await SendAsync(host, HttpMethod.Post, $"api/Write?name={Uri.EscapeDataString(key)}", body, cancellation);
        var op = new RegisterOp(key, true, value, invoked, Stopwatch.GetTimestamp(), ok, id) { Error = ok ? null : answer };
        Record(op, false, row, history);
        return op;
    }

    /// <summary>Reads register <paramref name="key"/> through the host <paramref name="host"/> (<paramref name="id"/> names it).</summary>
    public static async Task<RegisterOp> ReadAsync(FaaSCacheHostProcess host, string id, string key, ReliabilityRow row, RegisterHistory? history, CancellationToken cancellation)
    {
        long invoked = Stopwatch.GetTimestamp();
        (bool ok, string body) = await SendAsync(host, HttpMethod.Get, $"api/Read?name={Uri.EscapeDataString(key)}", null, cancellation);
        long returned = Stopwatch.GetTimestamp();
        string? value = null;
        bool partial = false;
        if (ok)
        {
            using JsonDocument json = JsonDocument.Parse(body);
            JsonElement v = json.RootElement.GetProperty("value");
            value = v.ValueKind == JsonValueKind.Null ? null : v.GetString();
            partial = !json.RootElement.GetProperty("intact").GetBoolean();
        }

        var op = new RegisterOp(key, false, value, invoked, returned, ok && !partial, id) { Error = ok ? (partial ? "partial body" : null) : body };
        Record(op, partial, row, history);
        return op;
    }

    /// <summary>What storage holds for <paramref name="key"/>: the value named and whether the body is intact (null: no blob).</summary>
    public async Task<(string? Value, bool Intact)> StoredAsync(string key, CancellationToken cancellation)
    {
        BlobClient blob = Container.GetBlobClient(key);
        if (!(await blob.ExistsAsync(cancellation)).Value)
        {
            return (null, true);
        }

        BinaryData content = (await blob.DownloadContentAsync(cancellation)).Value.Content;
        return ReliabilityValue.Decode(content.ToMemory().Span);
    }

    /// <summary>
    /// Ends the scenario: every instance still running stops with SIGTERM; maps left in the folders of those that stopped
    /// cleanly count as leaked; tracked processes still alive <see cref="ProcessGoneTimeout"/> later count as leaked.
    /// </summary>
    public async Task FinishAsync(ReliabilityRow row, TextWriter log)
    {
        List<ClusterInstance> running = [.. Cluster.Instances.Where(i => !i.Host.HasExited)];
        await TrackProcessesAsync(CancellationToken.None);
        foreach (ClusterInstance instance in running)
        {
            try
            {
                await instance.Host.StopAsync();
            }
            catch (TimeoutException)
            {
                row.Note($"{instance.Id} did not exit within {FaaSCacheHostProcess.StopTimeout.TotalSeconds:0} s of SIGTERM");
            }
        }

        foreach (ClusterInstance instance in running)
        {
            int left = Directory.Exists(instance.MapDirectory) ? Directory.EnumerateFiles(instance.MapDirectory).Count() : 0;
            row.LeakedMaps += left;
            if (left > 0)
            {
                row.Note($"{instance.Id} left {left.ToString(CultureInfo.InvariantCulture)} maps in {instance.MapDirectory} after SIGTERM");
            }
        }

        var clock = Stopwatch.StartNew();
        List<int> alive = [.. _pids.Where(IsAlive)];
        while (alive.Count > 0 && clock.Elapsed < ProcessGoneTimeout)
        {
            await Task.Delay(200);
            alive = [.. alive.Where(IsAlive)];
        }

        row.LeakedProcesses += alive.Count;
        if (alive.Count > 0)
        {
            row.Note($"processes alive {ProcessGoneTimeout.TotalSeconds:0} s after the end: {string.Join(", ", alive.Select(Describe))}");
        }

        foreach (ClusterInstance instance in Cluster.Instances)
        {
            if (LeaksSecret(instance.Host.Output) is { } secret)
            {
                row.Note($"FAILED: the log of {instance.Id} holds {secret}");
            }
        }

        log.WriteLine($"  finished: {running.Count.ToString(CultureInfo.InvariantCulture)} stopped with SIGTERM, {_killed.Count.ToString(CultureInfo.InvariantCulture)} killed, {_pids.Count.ToString(CultureInfo.InvariantCulture)} processes tracked, {alive.Count.ToString(CultureInfo.InvariantCulture)} left");
    }

    /// <summary>What secret <paramref name="text"/> holds (the storage account key, an AccountKey= or SharedAccessSignature= setting), or null.</summary>
    public static string? LeaksSecret(string text) =>
        text.Contains(AzuriteServer.AccountKey[..20], StringComparison.Ordinal) ? "the storage account key"
        : text.Contains("AccountKey=", StringComparison.OrdinalIgnoreCase) ? "an AccountKey= setting"
        : text.Contains("SharedAccessSignature=", StringComparison.OrdinalIgnoreCase) ? "a SharedAccessSignature= setting"
        : null;

    /// <summary>True when <paramref name="pid"/> is a live process (not gone, not a zombie).</summary>
    public static bool IsAlive(int pid)
    {
        try
        {
            string stat = File.ReadAllText($"/proc/{pid.ToString(CultureInfo.InvariantCulture)}/stat");
            int close = stat.LastIndexOf(')');
            return close > 0 && close + 2 < stat.Length && stat[close + 2] != 'Z';
        }
        catch (IOException)
        {
            return false;
        }
        catch (UnauthorizedAccessException)
        {
            return false;
        }
    }

    /// <inheritdoc />
    public async ValueTask DisposeAsync()
    {
        try
        {
            await Cluster.DisposeAsync();
        }
        finally
        {
            _app.Dispose();
        }
    }

    private static string Describe(int pid)
    {
        try
        {
            string cmdline = File.ReadAllText($"/proc/{pid.ToString(CultureInfo.InvariantCulture)}/cmdline").Replace('\0', ' ');
            return $"{pid.ToString(CultureInfo.InvariantCulture)} ({cmdline[..Math.Min(80, cmdline.Length)].Trim()})";
        }
        catch (IOException)
        {
            return pid.ToString(CultureInfo.InvariantCulture);
        }
    }

    private static void Record(RegisterOp op, bool partial, ReliabilityRow row, RegisterHistory? history)
    {
        row.Count(op, partial);
        history?.Add(op);
    }

    private static async Task<(bool Ok, string Body)> SendAsync(FaaSCacheHostProcess host, HttpMethod method, string path, byte[]? content, CancellationToken cancellation)
    {
        using var request = new HttpRequestMessage(method, path);
        if (content is not null)
        {
            request.Content = new ByteArrayContent(content);
            request.Content.Headers.ContentType = new System.Net.Http.Headers.MediaTypeHeaderValue("application/octet-stream");
        }

        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellation);
        timeout.CancelAfter(OperationTimeout);
        try
        {
            using HttpResponseMessage response = await host.Http.SendAsync(request, timeout.Token);
            string body = await response.Content.ReadAsStringAsync(timeout.Token);
            bool ok = response.StatusCode == HttpStatusCode.OK;
            return (ok, ok ? body : $"HTTP {((int)response.StatusCode).ToString(CultureInfo.InvariantCulture)}: {body}");
        }
        catch (Exception e) when (e is HttpRequestException or IOException || (e is OperationCanceledException && !cancellation.IsCancellationRequested))
        {
            return (false, $"no answer: {e.GetType().Name}: {e.Message}");
        }
    }
}
