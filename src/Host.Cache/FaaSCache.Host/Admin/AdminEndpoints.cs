using Microsoft.AspNetCore.Mvc;

namespace FaaSCache.Host.Admin;

/// <summary>Read-only admin endpoints: host status with cache counters, and the recent invocations.</summary>
public static class AdminEndpoints
{
    /// <summary>The Functions host's anonymous liveness path: 200, no body, no key.</summary>
    public const string PingPath = "/admin/host/ping";

    /// <summary>The readiness path for probes and the front door: 200 once the host runs, 503 before (no key).</summary>
    public const string ReadyPath = "/admin/host/ready";

    /// <summary>Maps <c>/admin/host/status</c>, <c>/admin/invocations</c> and <c>POST /admin/cache/remove?key=container/blob</c>.</summary>
    public static void Map(WebApplication web)
    {
        // The cache's faces and daemons are optional services: a host with --cache off (or membership off) has none.
        web.MapGet("/admin/host/status", (
            FunctionApp app,
            HostSettings settings,
            InvocationLog log,
            HostLifecycle lifecycle,
            SharedMemoryStore shm,
            IReadOnlyDictionary<string, LanguageWorkerManager> workers,
            [FromServices] ICacheAdmin? cacheAdmin,
            [FromServices] MembershipDaemon? membership,
            [FromServices] MemoryDaemon? memoryDaemon,
            [FromServices] LoadDaemon? loadDaemon) =>
        {
            ICacheAdmin? cachelet = settings.CacheEnabled ? cacheAdmin : null;
            return Results.Json(new HostStatus(
                App: settings.AppName,
                InstanceId: settings.InstanceId,
                State: lifecycle.State.ToString(),
                Cache: settings.CacheEnabled ? "on" : "off",
                Functions: [.. app.Functions.Select(f => f.Name)],
                Workers: [.. workers.Values.Select(w => new HostWorkerStatus(w.Language, w.ProcessId, w.Restarts, w.State.ToString().ToLowerInvariant(), w.Failure))],
                Invocations: new HostInvocationTotals(log.Succeeded, log.Failed, log.BytesCopied),
                SharedMemory: new HostSharedMemoryStatus(shm.MapDirectory, shm.MapCount),
                Counters: cachelet?.Metrics.Snapshot(),
                PendingWrites: cachelet?.PendingWrites ?? 0,
                PeerEndpoint: membership is null ? null : settings.PeerEndpoint.ToString(),
                Members: membership?.Members.Select(m => new HostMemberStatus(m.Id, m.Endpoint?.ToString(), m.LastHeartbeat)).ToList(),
                Memory: settings.CacheEnabled ? memoryDaemon?.Status() : null,
                Prewarm: settings.CacheEnabled ? loadDaemon?.Status() : null,
                Error: lifecycle.Error,
                ProcessId: Environment.ProcessId));
        });
        web.MapMethods(PingPath, [HttpMethods.Get, HttpMethods.Post], () => Results.Ok());
        web.MapGet(ReadyPath, (HostLifecycle lifecycle) => Results.Json(
            new { state = lifecycle.State.ToString(), error = lifecycle.Error },
            statusCode: lifecycle.State == HostState.Running ? StatusCodes.Status200OK : StatusCodes.Status503ServiceUnavailable));
        web.MapGet("/admin/invocations", (InvocationLog log, string? function) => Results.Json(log.Recent(function)));

        // Drops one key from this instance's cache (the next read is a miss): for benchmarks and operators.
        web.MapPost("/admin/cache/remove", (string? key, HostSettings settings, [FromServices] ICacheAdmin? cacheAdmin) =>
        {
            if (string.IsNullOrEmpty(key))
            {
                return Results.BadRequest(new { error = "query parameter 'key' (container/blob) is required" });
            }

            ICacheAdmin? cachelet = settings.CacheEnabled ? cacheAdmin : null;
            return cachelet is null
                ? Results.Conflict(new { error = "the cache is off (--cache off)" })
                : Results.Json(new { key, removed = cachelet.Remove(key) });
        });
    }
}
