namespace FaaSCache.Bandwidth;

/// <summary>The planner's choice for one object: how many instances should share its download, and why.</summary>
/// <param name="Instances">N, the instances that download a range each (1 = the requester alone).</param>
/// <param name="PredictedSeconds">T_DR at N.</param>
/// <param name="Evaluated">T_DR for N = 1, 2, ... as far as the iteration went.</param>
/// <param name="Reason">Why, with the numbers.</param>
public sealed record BandwidthPlan(int Instances, double PredictedSeconds, IReadOnlyList<double> Evaluated, string Reason)
{
    /// <summary>Gets the predicted time at N = 1.</summary>
    public double SingleSeconds => Evaluated.Count > 0 ? Evaluated[0] : PredictedSeconds;
}

/// <summary>
/// §4, bandwidth scaling: for an object of size S choose N minimising
/// <c>T_DR = T_Load + (S/N)/BW_BS + (S - S/N)/BW_Inst</c>, iterating N upwards and stopping when T_DR changes by less
/// than 10% or rises (the step that gains less than 10% is not taken). Two refinements over the paper, both measured rather than configured: T_Load counts only when N
/// exceeds the instances already running (running ones load nothing), and each side pays its first-byte latency
/// (storage always, peers when N &gt; 1), which is what makes a 400 KB object stay with one instance (Fig. 12).
/// The iteration starts at N = 1 rather than at the running count, so a small object is never split just because
/// instances happen to be up.
/// </summary>
public static class BandwidthPlanner
{
    /// <summary>The relative change of T_DR below which adding an instance is not worth it (the paper's 10%).</summary>
    public const double StopChange = 0.10;

    /// <summary>Plans the download of <paramref name="sizeBytes"/> bytes.</summary>
    /// <param name="sizeBytes">S.</param>
    /// <param name="running">Instances running now (the requester included).</param>
    /// <param name="maxInstances">The most instances the plan may use.</param>
    /// <param name="profile">Measured rates and latencies.</param>
    public static BandwidthPlan Plan(long sizeBytes, int running, int maxInstances, TransferProfile profile)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(sizeBytes);
        ArgumentOutOfRangeException.ThrowIfLessThan(running, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(maxInstances, 1);
        ArgumentNullException.ThrowIfNull(profile);
        if (!profile.HasBandwidths)
        {
            double? single = profile.StorageBytesPerSecond > 0 ? Predict(1, sizeBytes, running, profile) : null;
            return new BandwidthPlan(1, single ?? 0, single is { } t ? [t] : [], "bandwidths not measured yet: one instance");
        }

        var evaluated = new List<double> { Predict(1, sizeBytes, running, profile) };
        int best = 1;
        string stop = $"stopped at the limit of {maxInstances} instance(s)";
        for (int n = 2; n <= maxInstances; n++)
        {
            if (n > running && profile.InstanceLoad is null)
            {
                stop = $"stopped at {running} running instance(s): the time to start one more is not measured yet";
                break;
            }

            double previous = evaluated[^1];
            double current = Predict(n, sizeBytes, running, profile);
            evaluated.Add(current);
            if (current >= previous)
            {
                stop = $"T_DR rises at N={n} ({Seconds(current)} >= {Seconds(previous)})";
                break;
            }

            // A gain under 10% is not worth another instance's link: keep N-1 (a 400 KB object stays with one).
            if ((previous - current) / previous < StopChange)
            {
                stop = $"T_DR changes by less than {StopChange:P0} at N={n} ({Seconds(previous)} -> {Seconds(current)})";
                break;
            }

            best = n;
        }

        return new BandwidthPlan(best, evaluated[best - 1], evaluated, $"N={best}: {Seconds(evaluated[best - 1])} vs {Seconds(evaluated[0])} alone; {stop}");
    }

    /// <summary>T_DR for <paramref name="n"/> instances, in seconds.</summary>
    public static double Predict(int n, long sizeBytes, int running, TransferProfile profile)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(n, 1);
        ArgumentNullException.ThrowIfNull(profile);
        double s = sizeBytes;
        double storage = profile.StorageBytesPerSecond ?? throw new InvalidOperationException("BW_BS is not measured.");
        double t = (profile.StorageLatency?.TotalSeconds ?? 0) + (s / n / storage);
        if (n > 1)
        {
            double peer = profile.PeerBytesPerSecond ?? throw new InvalidOperationException("BW_Inst is not measured.");
            t += (profile.PeerLatency?.TotalSeconds ?? 0) + ((s - (s / n)) / peer);
        }

        if (n > running)
        {
            t += (profile.InstanceLoad ?? throw new InvalidOperationException("T_Load is not measured.")).TotalSeconds;
        }

        return t;
    }

    private static string Seconds(double s) => s.ToString(s < 1 ? "0.000 s" : "0.00 s", System.Globalization.CultureInfo.InvariantCulture);
}
