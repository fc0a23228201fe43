using FaaSCache.Bandwidth;
using FaaSCache.Scaling;
using FaaSCache.Scaling.Voters;
using Microsoft.AspNetCore.Mvc;
using Microsoft.Azure.WebJobs.Host.Scale;

namespace FaaSCache.Host.Admin;

/// <summary>§4 on the admin port: the votes as the Functions host serves them, and a timed read for benchmarks and operators.</summary>
public static class ScaleEndpoints
{
    /// <summary>Maps <c>POST /admin/host/scale/status</c> and <c>POST /admin/cache/read?key=container/blob[&amp;instances=N]</c>.</summary>
    public static void Map(WebApplication web)
    {
        ArgumentNullException.ThrowIfNull(web);
        web.MapPost("/admin/host/scale/status", async (HttpRequest request, ScaleVoteAggregator aggregator, TransferProfiler profiler) =>
        {
            HostScaleStatusRequest? body;
            try
            {
                body = await request.ReadFromJsonAsync<HostScaleStatusRequest>().ConfigureAwait(false);
            }
            catch (Exception e) when (e is System.Text.Json.JsonException or InvalidOperationException)
            {
                return Results.BadRequest(new { error = $"the body must be a ScaleStatusContext such as {{\"workerCount\": 2}}: {e.Message}" });
            }

            if (body?.WorkerCount is not >= 0)
            {
                return Results.BadRequest(new { error = $"'workerCount' must be a whole number of at least 0 (got {body?.WorkerCount?.ToString(System.Globalization.CultureInfo.InvariantCulture) ?? "nothing"})" });
            }

            InstanceVotes votes = await aggregator.VoteAsync(body.WorkerCount.Value).ConfigureAwait(false);
            return Results.Json(ToStatus(votes, aggregator, profiler.Current, profiler.InboundSuspicion));
        });

        web.MapPost("/admin/cache/read", async (
            string? key,
            int? instances,
            HostSettings settings,
            [FromServices] IObjectCache? cache,
            [FromServices] BandwidthScaler? bandwidth,
            CancellationToken cancellationToken) =>
        {
            if (string.IsNullOrEmpty(key))
            {
                return Results.BadRequest(new { error = "query parameter 'key' (container/blob) is required" });
            }

            if (instances is < 1)
            {
                return Results.BadRequest(new { error = $"query parameter 'instances' must be at least 1 (got {instances})" });
            }

            if (!settings.CacheEnabled || cache is null)
            {
                return Results.Conflict(new { error = "the cache is off (--cache off)" });
            }

            if (instances is > 1 && bandwidth is null)
            {
                return Results.Conflict(new { error = "bandwidth scaling is not composed in this host" });
            }

            DateTimeOffset started = DateTimeOffset.UtcNow;
            long clock = Stopwatch.GetTimestamp();
            using IDisposable? forced = instances is { } n ? bandwidth?.Force(n) : null;
            using ObjectLease lease = await cache.ReadAsync(key, cancellationToken).ConfigureAwait(false);
            double seconds = Stopwatch.GetElapsedTime(clock).TotalSeconds;
            ScaledLoadRecord? load = bandwidth?.Recent(TimeSpan.FromHours(1)).LastOrDefault(r => r.Key == key && r.At >= started);
            return Results.Json(new HostCacheRead(
                key,
                lease.Count,
                lease.Source.ShortName(),
                seconds,
                load?.Used ?? 1,
                load?.Planned,
                load?.TakenBack ?? 0,
                load?.Checksum,
                load?.Reason,
                load?.Ranges));
        });
    }

    private static HostScaleStatus ToStatus(InstanceVotes votes, ScaleVoteAggregator aggregator, TransferProfile p, string? suspicion)
    {
        var monitors = new Dictionary<string, HostMonitorStatus>(StringComparer.Ordinal);
        var targets = new Dictionary<string, HostTargetScalerResult>(StringComparer.Ordinal);
        foreach ((IFaaSCacheVoter voter, VoterResult result) in aggregator.Voters.Zip(votes.Voters))
        {
            if (voter is IScaleMonitor monitor)
            {
                monitors[monitor.Descriptor.Id] = new HostMonitorStatus((int)result.Vote);
            }

            if (voter is ITargetScaler scaler && result.TargetWorkerCount is { } target)
            {
                targets[scaler.TargetScalerDescriptor.FunctionId] = new HostTargetScalerResult(target);
            }
        }

        return new HostScaleStatus(
            (int)votes.Vote,
            votes.TargetWorkerCount,
            monitors,
            targets,
            votes.InstanceId,
            votes.InFlight,
            [.. votes.Voters.Select(v => new HostVoterStatus(v.Voter, (int)v.Vote, v.TargetWorkerCount, v.Reason, v.Metrics))],
            new HostTransferProfile(p.StorageBytesPerSecond, p.StorageLatency?.TotalSeconds, p.PeerBytesPerSecond, p.PeerLatency?.TotalSeconds, p.InstanceLoad?.TotalSeconds, p.InboundBytesPerSecond, p.InboundSource, suspicion));
    }
}
