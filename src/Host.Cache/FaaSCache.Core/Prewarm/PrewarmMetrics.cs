using System.Diagnostics.Metrics;

namespace FaaSCache.Prewarm;

/// <summary>The Load Daemon's instruments on the <c>FaaSCache</c> meter (beside the cachelet's, same instance tag).</summary>
public sealed class PrewarmMetrics : IDisposable
{
    private readonly Meter _meter;
    private readonly Counter<long> _objects;
    private readonly Counter<long> _bytes;
    private readonly Counter<long> _skipped;
    private readonly Counter<long> _pauses;
    private readonly Counter<long> _snapshots;
    private readonly KeyValuePair<string, object?> _instance;

    /// <summary>Initializes a new instance of the <see cref="PrewarmMetrics"/> class.</summary>
    /// <param name="instanceId">Tagged on every measurement.</param>
    /// <param name="meterFactory">Optional factory (DI); a private meter otherwise.</param>
    public PrewarmMetrics(string instanceId, IMeterFactory? meterFactory = null)
    {
        _meter = meterFactory?.Create(CacheletMetrics.MeterName) ?? new Meter(CacheletMetrics.MeterName);
        _instance = new("instance", instanceId);
        _objects = _meter.CreateCounter<long>("faascache.prewarm_objects", "{object}", "Objects the Load Daemon loaded at start (§3.3)");
        _bytes = _meter.CreateCounter<long>("faascache.prewarm_bytes", "By", "Bytes the Load Daemon loaded at start");
        _skipped = _meter.CreateCounter<long>("faascache.prewarm_skipped", "{object}", "Selected objects the Load Daemon did not load (reason: cached, no_room, changed, missing, failed)");
        _pauses = _meter.CreateCounter<long>("faascache.prewarm_pauses", "{pause}", "Times pre-warm yielded to an invocation");
        _snapshots = _meter.CreateCounter<long>("faascache.prewarm_snapshots", "{snapshot}", "Unload snapshots (op: written, read, skipped)");
    }

    /// <summary>Records an object loaded.</summary>
    public void Loaded(long bytes)
    {
        _objects.Add(1, _instance);
        _bytes.Add(bytes, _instance);
    }

    /// <summary>Records a selected object not loaded, with why.</summary>
    public void Skipped(string reason) => _skipped.Add(1, _instance, new KeyValuePair<string, object?>("reason", reason));

    /// <summary>Records a pause for an invocation.</summary>
    public void Paused() => _pauses.Add(1, _instance);

    /// <summary>Records snapshots written, read or skipped.</summary>
    public void Snapshots(string op, long count) => _snapshots.Add(count, _instance, new KeyValuePair<string, object?>("op", op));

    /// <inheritdoc />
    public void Dispose() => _meter.Dispose();
}
