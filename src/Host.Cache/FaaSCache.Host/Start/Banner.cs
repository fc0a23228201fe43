namespace FaaSCache.Host.Start;

/// <summary>What the host prints once it listens: endpoints, storage, shared memory, the policies in force, the functions.</summary>
public static class Banner
{
    /// <summary>The banner text.</summary>
    /// <param name="app">The app.</param>
    /// <param name="settings">The host's settings.</param>
    /// <param name="shm">The shared-memory store.</param>
    /// <param name="storage">Blob storage.</param>
    /// <param name="o">The app's cache options.</param>
    /// <param name="membership">The membership daemon (null with membership off).</param>
    /// <param name="http">The HTTP address.</param>
    /// <param name="grpc">The workers' gRPC address.</param>
    /// <param name="sdk">The SDK endpoint, when it runs.</param>
    /// <param name="keys">Where the keys come from, null when they are not enforced.</param>
    public static string Describe(FunctionApp app, HostSettings settings, SharedMemoryStore shm, IBlobStore storage, FaaSCacheOptions o, MembershipDaemon? membership, Uri http, Uri grpc, Uri? sdk = null, string? keys = null)
    {
        var inv = CultureInfo.InvariantCulture;
        var text = new StringBuilder();
        text.AppendLine(inv, $"FaaSCache host: app '{app.Name}' ({app.RootDirectory})");
        text.AppendLine(inv, $"  HTTP           {http}");
        text.AppendLine(inv, $"  Worker gRPC    {grpc} ({string.Join(", ", app.Workers.Keys)})");
        text.AppendLine(inv, $"  Storage        {storage.AccountUri}");
        text.AppendLine(sdk is null
            ? "  SDK endpoint   off (storage SDK calls in functions go to storage directly)"
            : string.Create(inv, $"  SDK endpoint   {sdk} (the workers' connection strings name it as BlobEndpoint)"));
        text.AppendLine(inv, $"  Shared memory  {shm.MapDirectory} (instance {settings.InstanceId}{(shm.SweptAtStartup > 0 ? $", swept {shm.SweptAtStartup} stale maps" : string.Empty)})");
        text.AppendLine(settings.CacheEnabled
            ? string.Create(inv, $"  Cache          on: consistency {o.Consistency}, persist {o.EffectivePersist}, eviction {o.Eviction.Policy}, capacity {o.EffectiveCapacityBytes / (1024 * 1024)} MiB, doNotCache [{string.Join(", ", o.DoNotCache)}]")
            : "  Cache          off (stock behaviour: blob bytes inside the gRPC messages)");
        text.AppendLine(settings.Membership
            ? string.Create(inv, $"  Peers          {settings.PeerEndpoint} (app '{settings.AppName}', {membership?.Members.Count ?? 0} member(s) now, ring of {o.Membership.VirtualNodes} virtual nodes each)")
            : "  Peers          none (membership off: this instance owns every key)");
        if (settings.CacheEnabled)
        {
            // What the cache writes into the app's storage account besides the app's own blobs, and whom it joins there.
            string snapshots = o.Prewarm.Enabled ? $"{SnapshotStore.Container}/{settings.AppName}/ (pre-warm snapshots, written at unload)" : "no pre-warm snapshots (prewarm off)";
            text.AppendLine(settings.Membership
                ? string.Create(inv, $"  In storage     {MembershipStore.DefaultContainerName}/{MembershipStore.BlobNameFor(settings.AppName)} (every instance started with app name '{settings.AppName}' on this account joins it; --app-name to choose), {snapshots}")
                : string.Create(inv, $"  In storage     {snapshots}"));
        }
        text.AppendLine(inv, $"  Admin          {http}admin/host/status, {http}admin/invocations, {http}metrics (Prometheus)");
        text.AppendLine(keys is null
            ? "  Keys           not enforced: local development (as func start); --auth on (faascache start --enable-auth) enforces authLevel and the master key"
            : string.Create(inv, $"  Keys           enforced: authLevel per HTTP trigger (x-functions-key or ?code=), the master key for /admin and /metrics; keys from {keys}"));
        text.AppendLine("  Functions:");
        foreach (FunctionDefinition f in app.Functions)
        {
            string trigger = f.Trigger.IsHttpTrigger
                ? $"[{(f.Methods.Count == 0 ? "ALL" : string.Join(",", f.Methods))}] {http}{(app.RoutePrefix.Length > 0 ? app.RoutePrefix + "/" : string.Empty)}{f.Route}"
                : f.Trigger.IsTimerTrigger ? $"timerTrigger {f.Trigger.Property("schedule")}" : $"{f.Trigger.Type} {f.Trigger.Path}";
            text.AppendLine(inv, $"    {f.Name} ({f.Language}{(f.WorkerIndexed ? ", indexed by its worker" : string.Empty)}): {trigger}");
        }

        foreach (string error in app.FunctionErrors)
        {
            text.AppendLine(inv, $"    in error, left out: {error}");
        }

        return text.ToString();
    }
}
