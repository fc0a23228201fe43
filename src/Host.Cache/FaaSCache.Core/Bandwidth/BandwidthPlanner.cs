namespace FaaSCache.Bandwidth;

/// <summary>The planner's choice for one object: how many instances should share its download, and why.</summary>
/// <param name="Instances">N, the instances that download a range each (1 = the requester alone).</param>
/// <param name="PredictedSeconds">T_DR at N.</param>
/// <param name="Evaluated">T_DR for N = 1, 2, ... up to the limit the plan could use.</param>
/// <param name="Reason">Why, with the numbers.</param>
public sealed record BandwidthPlan(int Instances, double PredictedSeconds, IReadOnlyList<double> Evaluated, string Reason)
{
    /// <summary>Gets the predicted time at N = 1.</summary>
    public double SingleSeconds => Evaluated.Count > 0 ? Evaluated[0] : PredictedSeconds;
}

/// <summary>
/// §4, bandwidth scaling: for an object of size S choose how many instances share its download. The paper predicts
/// <c>T_DR = T_Load + (S/N)/BW_BS + (S - S/N)/BW_Inst</c> and iterates N upwards until T_DR changes by less than 10%. Two
/// changes, both measured by the simulator's Fig. 12 replay: T_DR is predicted as the cachelet executes the load
/// (<see cref="ScaledLoadModel"/>: helpers stream their range on as it arrives, and helpers that must start join T_Load
/// later while the requester keeps reading), and N is the fastest of the running instances (using one costs nothing) unless
/// starting more would gain over 10%, then the fewest whose T_DR is within 10% of the best N up to the limit, rather than
/// the last N before a step gains less than 10% (with helpers to start, each step gains a little
/// and the first small step stopped the paper's rule at 2-3 instances where 6 were 10-21% faster). A 400 KB object stays
/// with one instance: an object under 2 MiB is never split. Nothing is planned on unmeasured rates.
/// </summary>
public static class BandwidthPlanner
{
    /// <summary>How much slower than the best N a plan with fewer instances may be (the paper's 10%).</summary>
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

        int limit = maxInstances;
        string bound = $"up to the limit of {maxInstances} instance(s)";
        if (profile.InstanceLoad is null && running < maxInstances)
        {
            limit = running;
            bound = $"up to the {running} running instance(s): the time to start one more is not measured yet";
        }

        var evaluated = new List<double>(limit);
        for (int n = 1; n <= limit; n++)
        {
            evaluated.Add(Predict(n, sizeBytes, running, profile));
        }

        double best = evaluated.Min();
        int fastest = evaluated.IndexOf(best) + 1;
        int chosen = Choose(evaluated, Math.Min(running, limit), best);
        string why = chosen == fastest
            ? $"the fastest {bound}"
            : chosen <= running
                ? $"the fastest of the {running} running instance(s), within {StopChange * 100:0}% of the fastest {bound} (N={fastest}: {Seconds(best)})"
                : $"the fewest within {StopChange * 100:0}% of the fastest {bound} (N={fastest}: {Seconds(best)})";
        if (profile.InboundBytesPerSecond is { } inbound)
        {
            string held = string.Create(System.Globalization.CultureInfo.InvariantCulture, $"split loads held to the {inbound / 1e6:0} MB/s measured into this instance ({profile.InboundSource ?? "a recent load"})");
            // The limit is what earlier loads carried, and a load held to it can never show that the link carries more:
            // where it binds and a split is chosen, the plan takes one instance more than the fewest that reach it (no slower
            // by the model, and a load that carries more raises the limit; one that does not confirms it). Where the 10%
            // slack keeps one instance (a held split gains too little to start instances for), nothing is tested: the
            // split that did not pay is not made again.
            if (profile.InboundConfirmed)
            {
                why += $"; {held}, confirmed by a split since (not tested again while it holds)";
            }
            else if (chosen > 1 && fastest > 1 && fastest < limit && best >= ScaledLoadModel.InboundFloor(sizeBytes, profile) * (1 - 1e-9))
            {
                chosen = fastest + 1;
                why = $"{held}; where it binds (N={fastest}: {Seconds(best)}, {bound}), one more instance ({chosen}) tests whether it still holds";
            }
            else
            {
                why += $"; {held}";
            }
        }

        return new BandwidthPlan(chosen, evaluated[chosen - 1], evaluated, $"N={chosen}: {Seconds(evaluated[chosen - 1])} vs {Seconds(evaluated[0])} alone; {why}");
    }

    /// <summary>
    /// The N to use: an instance already running costs nothing to use, so among them the predicted fastest is taken (a
    /// 10% slack there took N=4 where N=5 was 10-15% faster, as bandwidth-scaling measured); the paper's 10% spares only
    /// instances that must start: the running instances' best is kept when it is within 10% of what starting more would
    /// give, else the fewest within 10% of the fastest.
    /// </summary>
    private static int Choose(List<double> evaluated, int warm, double best)
    {
        int fastestWarm = 1;
        for (int n = 2; n <= warm; n++)
        {
            if (evaluated[n - 1] < evaluated[fastestWarm - 1])
            {
                fastestWarm = n;
            }
        }

        double within = best * (1 + StopChange);
        if (evaluated[fastestWarm - 1] <= within)
        {
            return fastestWarm;
        }

        for (int n = warm + 1; n <= evaluated.Count; n++)
        {
            if (evaluated[n - 1] <= within)
            {
                return n;
            }
        }

        return evaluated.IndexOf(best) + 1;
    }

    /// <summary>T_DR for <paramref name="n"/> instances, in seconds, as the cachelet executes the load (<see cref="ScaledLoadModel"/>).</summary>
    public static double Predict(int n, long sizeBytes, int running, TransferProfile profile) => ScaledLoadModel.Seconds(sizeBytes, n, running, profile);

    private static string Seconds(double s) => s.ToString(s < 1 ? "0.000 s" : "0.00 s", System.Globalization.CultureInfo.InvariantCulture);
}
