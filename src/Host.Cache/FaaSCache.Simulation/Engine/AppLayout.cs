using System.Globalization;
using FaaSCache.Ownership;

namespace FaaSCache.Simulation.Engine;

/// <summary>
/// Where an app's keys live: its instance count and each key's owner on the real SHA256
/// <see cref="ConsistentHashRing"/> (§3.2), computed once per app and shared by every policy set.
/// </summary>
public sealed class AppLayout
{
    private AppLayout(int instances, int[] owner, string[] instanceIds)
    {
        Instances = instances;
        Owner = owner;
        InstanceIds = instanceIds;
    }

    /// <summary>Gets the instance count.</summary>
    public int Instances { get; }

    /// <summary>Gets the instance ids (ring members).</summary>
    public IReadOnlyList<string> InstanceIds { get; }

    internal int[] Owner { get; }

    /// <summary>Lays out <paramref name="trace"/> over the instances <paramref name="options"/> give it.</summary>
    /// <param name="trace">The app.</param>
    /// <param name="options">The simulation options.</param>
    /// <returns>The layout.</returns>
    public static AppLayout For(AppTrace trace, SimulationOptions options)
    {
        ArgumentNullException.ThrowIfNull(trace);
        ArgumentNullException.ThrowIfNull(options);
        return For(trace, trace.InstancesFor(options.InvocationsPerInstancePerMinute, options.MaxInstances));
    }

    /// <summary>Lays out <paramref name="trace"/> over <paramref name="instances"/> instances.</summary>
    /// <param name="trace">The app.</param>
    /// <param name="instances">The instance count.</param>
    /// <returns>The layout.</returns>
    public static AppLayout For(AppTrace trace, int instances)
    {
        ArgumentNullException.ThrowIfNull(trace);
        string[] ids = Enumerable.Range(0, instances).Select(i => trace.AppName + "/" + i.ToString(CultureInfo.InvariantCulture)).ToArray();
        int[] owner = new int[trace.Keys.Count];
        if (instances > 1)
        {
            var ring = new ConsistentHashRing(ids);
            var index = ids.Select((id, i) => (id, i)).ToDictionary(p => p.id, p => p.i, StringComparer.Ordinal);
            for (int k = 0; k < owner.Length; k++)
            {
                owner[k] = index[ring.GetOwner(trace.Keys[k])];
            }
        }

        return new AppLayout(instances, owner, ids);
    }

    /// <summary>The instance that runs invocation <paramref name="invocation"/>: the front door's round robin.</summary>
    /// <param name="invocation">The invocation ordinal.</param>
    /// <returns>The instance index.</returns>
    public int InstanceOf(int invocation) => invocation % Instances;
}
