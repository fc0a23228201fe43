using System.Net.Http.Json;
using FaaSCache.Diagnostics;

namespace FaaSCache.Tools;

/// <summary>
/// <c>host wait|status</c>: a running FaaSCache host's state, read through its typed admin records. <c>wait</c> is what
/// scripts call after starting a host: it returns when every worker is ready, and fails within seconds, printing the
/// worker's own error, when the host gave up starting one (or the host process is gone).
/// </summary>
public static class HostCommand
{
    private static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web);

    private static readonly Dictionary<string, Func<HostStatus, string>> Fields = new(StringComparer.Ordinal)
    {
        ["app"] = s => s.App,
        ["instance-id"] = s => s.InstanceId,
        ["functions"] = s => string.Join(' ', s.Functions),
        ["worker-pids"] = s => string.Join(' ', s.Workers.Select(w => w.Pid.ToString(CultureInfo.InvariantCulture))),
        ["shm-directory"] = s => s.SharedMemory.Directory,
        ["peer-endpoint"] = s => s.PeerEndpoint ?? "-",
        ["members"] = s => string.Join(' ', s.MemberIds),
    };

    /// <summary>Creates the command.</summary>
    public static Command Create()
    {
        var url = new Option<Uri>("--url")
        {
            Description = "The host's base address, e.g. http://127.0.0.1:7071/",
            Required = true,
            CustomParser = r =>
            {
                string text = r.Tokens.Count > 0 ? r.Tokens[0].Value : string.Empty;
                if (Uri.TryCreate(text.EndsWith('/') ? text : text + "/", UriKind.Absolute, out Uri? uri) && uri.Scheme is "http" or "https")
                {
                    return uri;
                }

                r.AddError($"--url '{text}' is not an http:// address");
                return null;
            },
        };
        var pid = new Option<int?>("--pid") { Description = "The host's process id: stop waiting at once if it exits." };
        var timeout = new Option<double>("--timeout")
        {
            Description = "Seconds to wait at most (> 0).",
            DefaultValueFactory = _ => 60,
        };
        timeout.Validators.Add(r =>
        {
            if (r.GetValueOrDefault<double>() is not > 0)
            {
                r.AddError("--timeout must be a positive number of seconds");
            }
        });

        var members = new Option<int?>("--members") { Description = "Also wait until the host sees this many members of its app (membership on)." };
        var wait = new Command("wait", "Waits until the host answers and every language worker has loaded its functions; fails naming the worker's error if one cannot start.")
        {
            url, pid, timeout, members,
        };
        wait.SetAction((r, ct) => WaitAsync(r.GetValue(url)!, r.GetValue(pid), r.GetValue(members), TimeSpan.FromSeconds(r.GetValue(timeout)), ct));

        var field = new Argument<string>("field") { Description = "What to print: " + string.Join(", ", Fields.Keys) };
        field.AcceptOnlyFromAmong([.. Fields.Keys]);
        var get = new Command("get", "Prints one value of the host's status, for scripts (one line; lists space-separated).") { url, field };
        get.SetAction(async (r, ct) =>
        {
            using var http = new HttpClient { BaseAddress = r.GetValue(url), Timeout = TimeSpan.FromSeconds(10) };
            if (await TryGetStatusAsync(http, ct) is not { } s)
            {
                await Console.Error.WriteLineAsync($"error: the host at {http.BaseAddress} does not answer /admin/host/status");
                return 1;
            }

            Console.WriteLine(Fields[r.GetValue(field)!](s));
            return 0;
        });

        var brief = new Option<int?>("--brief-pid") { Description = "Print two lines for a cluster listing instead, naming this host pid." };
        var width = new Option<int>("--width") { Description = "Column width of the instance id in --brief-pid lines.", DefaultValueFactory = _ => 20 };
        var membersOnly = new Option<bool>("--members") { Description = "Print only the members this host sees, with their heartbeat ages." };
        var status = new Command("status", "Prints the host's status: workers, invocations, shared memory, cache counters, members.") { url, brief, width, membersOnly };
        status.SetAction(async (r, ct) =>
        {
            using var http = new HttpClient { BaseAddress = r.GetValue(url), Timeout = TimeSpan.FromSeconds(10) };
            HostStatus? s = await TryGetStatusAsync(http, ct);
            if (s is null)
            {
                await Console.Error.WriteLineAsync($"error: the host at {http.BaseAddress} does not answer /admin/host/status");
                return 1;
            }

            Console.WriteLine(r.GetValue(membersOnly) ? DescribeMembers(s) : r.GetValue(brief) is int pid ? Brief(s, pid, r.GetValue(width)) : Describe(s));
            return 0;
        });

        var host = new Command("host", "A running FaaSCache host's state.") { wait, status, get };
        InvocationReport.AddTo(host, url);
        return host;
    }

    /// <summary>One paragraph about a host: app, instance, workers and their states, maps, counters, members.</summary>
    public static string Describe(HostStatus s)
    {
        var inv = CultureInfo.InvariantCulture;
        var text = new System.Text.StringBuilder();
        text.AppendLine(inv, $"app {s.App}, instance {s.InstanceId}, cache {s.Cache}, functions {string.Join(", ", s.Functions)}");
        foreach (HostWorkerStatus w in s.Workers)
        {
            text.AppendLine(inv, $"  worker {w.Language}: {w.State}, pid {w.Pid}, {w.Restarts} restart(s){(w.Error is null ? string.Empty : $"; {w.Error}")}");
        }

        text.AppendLine(inv, $"  invocations: {s.Invocations.Succeeded} succeeded, {s.Invocations.Failed} failed, {s.Invocations.BytesCopied:N0} bytes copied");
        text.AppendLine(inv, $"  shared memory: {s.SharedMemory.Directory} ({s.SharedMemory.Maps} maps)");
        if (s.Counters is { } c)
        {
            text.AppendLine(inv, $"  cache: {c.LocalHits} local hits, {c.LocalMisses} local misses, {c.RemoteHits} remote hits, {c.RemoteMisses} remote misses, {c.BytesCached:N0} bytes in {c.ObjectsCached} objects, {s.PendingWrites} pending writes");
        }

        if (s.Members is { } members)
        {
            text.AppendLine(inv, $"  peers: {s.PeerEndpoint}; members ({members.Count}): {string.Join(", ", members.Select(m => $"{m.Id} {m.Endpoint}"))}");
        }

        return text.ToString().TrimEnd();
    }

    /// <summary>Two lines of a cluster listing: state, peer, members, maps, invocations; then the cache counters.</summary>
    public static string Brief(HostStatus s, int pid, int width)
    {
        var inv = CultureInfo.InvariantCulture;
        string first = string.Create(inv, $"  {s.InstanceId.PadRight(width)} pid {pid,-8} up, peer {s.PeerEndpoint ?? "-"}, {(s.Members is null ? "-" : s.Members.Count.ToString(inv))} member(s), {s.SharedMemory.Maps} map(s), invocations {s.Invocations.Succeeded} ok / {s.Invocations.Failed} failed");
        if (s.Counters is not { } c)
        {
            return first;
        }

        return first + Environment.NewLine + string.Create(
            inv,
            $"  {string.Empty.PadRight(width)} lh {c.LocalHits}  lm {c.LocalMisses}  rh {c.RemoteHits}  rm {c.RemoteMisses}  fallback {c.StorageFallbacks}  ownerUnreachable {c.OwnerUnreachable}  peerServed {c.PeerServed}  invalidations {c.Invalidations}  bytesFromPeers {c.BytesFromPeers}  objects {c.ObjectsCached} ({c.BytesCached} bytes)");
    }

    /// <summary>The members a host sees, with their heartbeat ages.</summary>
    public static string DescribeMembers(HostStatus s)
    {
        if (s.Members is not { } members)
        {
            return "  membership off (--cache off): each instance owns every key";
        }

        var inv = CultureInfo.InvariantCulture;
        DateTimeOffset now = DateTimeOffset.UtcNow;
        int width = Math.Max(20, members.Select(m => m.Id.Length).DefaultIfEmpty(0).Max());
        var text = new System.Text.StringBuilder();
        text.Append(inv, $"  members ({members.Count}), as {s.InstanceId} sees them:");
        foreach (HostMemberStatus m in members)
        {
            double age = Math.Max(0, (now - m.LastHeartbeat).TotalSeconds);
            text.AppendLine().Append(inv, $"    {m.Id.PadRight(width)} {(m.Endpoint ?? "-").PadRight(28)}  heartbeat {age:0.0} s ago");
        }

        return text.ToString();
    }

    private static async Task<int> WaitAsync(Uri url, int? pid, int? members, TimeSpan timeout, CancellationToken cancellationToken)
    {
        using var http = new HttpClient { BaseAddress = url, Timeout = TimeSpan.FromSeconds(5) };
        var clock = Stopwatch.StartNew();
        HostStatus? last = null;
        while (clock.Elapsed < timeout)
        {
            if (pid is int p && !IsAlive(p))
            {
                await Console.Error.WriteLineAsync($"error: the host (pid {p}) exited after {clock.Elapsed.TotalSeconds:0.0} s, before it was ready");
                return 1;
            }

            last = await TryGetStatusAsync(http, cancellationToken);
            if (last?.Workers.FirstOrDefault(w => w.IsFailed) is { } failed)
            {
                await Console.Error.WriteLineAsync($"error: the host's {failed.Language} worker failed to start (seen after {clock.Elapsed.TotalSeconds:0.0} s): {failed.Error}");
                return 1;
            }

            if (last is not null && last.Workers.All(w => w.IsRunning) && (members is null || last.Members?.Count == members))
            {
                Console.WriteLine(string.Create(
                    CultureInfo.InvariantCulture,
                    $"{last.InstanceId} ready after {clock.Elapsed.TotalSeconds:0.0} s: app {last.App}, workers {string.Join(", ", last.Workers.Select(w => $"{w.Language} (pid {w.Pid})"))}{(members is null ? string.Empty : $", {members} members")}"));
                return 0;
            }

            await Task.Delay(100, cancellationToken);
        }

        string workers = last is null
            ? "the host never answered /admin/host/status"
            : string.Join(", ", last.Workers.Select(w => $"{w.Language} {w.State}")) + (members is null ? string.Empty : $"; members {last.Members?.Count ?? 0} of {members}");
        await Console.Error.WriteLineAsync($"error: the host at {url} was not ready within {timeout.TotalSeconds:0} s ({workers})");
        return 1;
    }

    private static async Task<HostStatus?> TryGetStatusAsync(HttpClient http, CancellationToken cancellationToken)
    {
        try
        {
            return await http.GetFromJsonAsync<HostStatus>("admin/host/status", Json, cancellationToken);
        }
        catch (Exception e) when (e is HttpRequestException or JsonException or TaskCanceledException && !cancellationToken.IsCancellationRequested)
        {
            return null;
        }
    }

    private static bool IsAlive(int pid)
    {
        try
        {
            using var process = Process.GetProcessById(pid);
            return !process.HasExited;
        }
        catch (ArgumentException)
        {
            return false;
        }
    }
}
