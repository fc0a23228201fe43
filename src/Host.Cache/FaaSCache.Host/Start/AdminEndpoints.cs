using FaaSCache.Caching;
using FaaSCache.Host.AppModel;
using FaaSCache.Membership;
using FaaSCache.Host.Invocation;
using FaaSCache.Host.Workers;
using FaaSCache.SharedMemory;

namespace FaaSCache.Host.Start;

/// <summary>Read-only admin endpoints: host status with cache counters, and the recent invocations.</summary>
public static class AdminEndpoints
{
    /// <summary>Maps <c>/admin/host/status</c>, <c>/admin/invocations</c> and <c>POST /admin/cache/remove?key=container/blob</c>.</summary>
    public static void Map(WebApplication web)
    {
        web.MapGet("/admin/host/status", (FunctionApp app, HostSettings settings, InvocationLog log, SharedMemoryStore shm, IReadOnlyDictionary<string, LanguageWorkerManager> workers, IServiceProvider sp) =>
        {
            Cachelet? cachelet = sp.GetService<Cachelet>();
            MembershipDaemon? membership = sp.GetService<MembershipDaemon>();
            return Results.Json(new
            {
                app = app.Name,
                instanceId = settings.InstanceId,
                state = "Running",
                cache = settings.CacheEnabled ? "on" : "off",
                functions = app.Functions.Select(f => f.Name),
                workers = workers.Values.Select(w => new { language = w.Language, pid = w.ProcessId, restarts = w.Restarts, state = w.State.ToString().ToLowerInvariant(), error = w.Failure }),
                invocations = new { succeeded = log.Succeeded, failed = log.Failed, bytesCopied = log.BytesCopied },
                sharedMemory = new { directory = shm.MapDirectory, maps = shm.MapCount },
                counters = cachelet?.Metrics.Snapshot(),
                pendingWrites = cachelet?.PendingWrites ?? 0,
                peerEndpoint = membership is null ? null : settings.PeerEndpoint.ToString(),
                members = membership?.Members.Select(m => new { id = m.Id, endpoint = m.Endpoint?.ToString(), lastHeartbeat = m.LastHeartbeat }),
            });
        });
        web.MapGet("/admin/invocations", (InvocationLog log, string? function) => Results.Json(log.Recent(function)));

        // Drops one key from this instance's cache (the next read is a miss): for benchmarks and operators.
        web.MapPost("/admin/cache/remove", (string? key, IServiceProvider sp) =>
        {
            if (string.IsNullOrEmpty(key))
            {
                return Results.BadRequest(new { error = "query parameter 'key' (container/blob) is required" });
            }

            Cachelet? cachelet = sp.GetService<Cachelet>();
            return cachelet is null
                ? Results.Conflict(new { error = "the cache is off (--cache off)" })
                : Results.Json(new { key, removed = cachelet.Remove(key) });
        });
    }
}
