using FaaSCache.Ownership;

namespace FaaSCache.Simulation.Engine;

/// <summary>
/// Where an app's keys live as its instances come and go: instance <c>i</c> is <c>&lt;app&gt;/i</c>, and with n instances
/// up the ring is the real SHA256 <see cref="ConsistentHashRing"/> (§3.2) of instances 0 .. n-1 (a scale-out adds the next
/// index, a scale-in removes the last), so each count has one ring; each key's owner under it is computed once per app,
/// when a replay first reaches that count, and shared by every policy set.
/// </summary>
public sealed class AppLayout
{
    private readonly Lazy<int[]>[] _owners;
    private readonly string[] _ids;

    private AppLayout(AppTrace trace, int maxInstances, int? fixedInstances)
    {
        MaxInstances = maxInstances;
        FixedInstances = fixedInstances;
        _ids = [.. Enumerable.Range(0, maxInstances).Select(i => trace.AppName + "/" + i.ToString(CultureInfo.InvariantCulture))];
        _owners = [.. Enumerable.Range(1, maxInstances).Select(n => new Lazy<int[]>(() => Owners(trace, _ids[..n]), LazyThreadSafetyMode.ExecutionAndPublication))];
    }

    /// <summary>Gets the most instances the app runs on.</summary>
    public int MaxInstances { get; }

    /// <summary>Gets the instance count when it is fixed, or null when the voters decide it (<see cref="AppScaler"/>).</summary>
    public int? FixedInstances { get; }

    /// <summary>Gets the fixed instance count, or the most the voters may reach.</summary>
    public int Instances => FixedInstances ?? MaxInstances;

    /// <summary>Gets the instance ids (ring members), by index.</summary>
    public IReadOnlyList<string> InstanceIds => _ids;

    /// <summary>A layout whose instance count the voters decide, up to <see cref="SimulationOptions.MaxInstances"/>.</summary>
    /// <param name="trace">The app.</param>
    /// <param name="options">The simulation options.</param>
    /// <returns>The layout.</returns>
    public static AppLayout For(AppTrace trace, SimulationOptions options)
    {
        ArgumentNullException.ThrowIfNull(trace);
        ArgumentNullException.ThrowIfNull(options);
        return new AppLayout(trace, options.MaxInstances, null);
    }

    /// <summary>A layout of exactly <paramref name="instances"/> instances for the whole replay (no voting).</summary>
    /// <param name="trace">The app.</param>
    /// <param name="instances">The instance count.</param>
    /// <returns>The layout.</returns>
    public static AppLayout For(AppTrace trace, int instances)
    {
        ArgumentNullException.ThrowIfNull(trace);
        ArgumentOutOfRangeException.ThrowIfLessThan(instances, 1);
        return new AppLayout(trace, instances, instances);
    }

    /// <summary>Each key's owner (an instance index) when instances 0 .. <paramref name="instances"/> - 1 are up.</summary>
    internal int[] OwnersWith(int instances) => _owners[instances - 1].Value;

    private static int[] Owners(AppTrace trace, string[] ids)
    {
        int[] owner = new int[trace.Keys.Count];
        if (ids.Length > 1)
        {
            var ring = new ConsistentHashRing(ids);
            var index = ids.Select((id, i) => (id, i)).ToDictionary(p => p.id, p => p.i, StringComparer.Ordinal);
            for (int k = 0; k < owner.Length; k++)
            {
                owner[k] = index[ring.GetOwner(trace.Keys[k])];
            }
        }

        return owner;
    }
}
