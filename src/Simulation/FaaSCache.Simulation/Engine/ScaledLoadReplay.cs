namespace FaaSCache.Simulation.Engine;

/// <summary>One row of the Fig. 12 replay: a size, running or cold helpers, a fixed N, its time and gain over one instance.</summary>
/// <param name="SizeBytes">S.</param>
/// <param name="Cold">True when the helpers must start first (T_Load), false when they run already.</param>
/// <param name="Instances">N, the requester included.</param>
/// <param name="Seconds">The download time as <c>ScaledLoad</c> executes it.</param>
/// <param name="ImprovementPct">How much faster than one instance alone, in percent.</param>
/// <param name="PlannerInstances">The N the cachelet would choose for this size and helper state.</param>
public sealed record ScaledLoadRow(long SizeBytes, bool Cold, int Instances, double Seconds, double ImprovementPct, int PlannerInstances);

/// <summary>
/// The paper's Fig. 12 as a deterministic replay of the cachelet's scaled load (§4): each size at every fixed N with running
/// or with cold helpers, timed by <see cref="ScaledLoadModel"/> (the load as <c>Bandwidth/ScaledLoad.cs</c> executes it),
/// beside the N <see cref="BandwidthPlanner"/> chooses. Left out: the 64 KiB alignment of the ranges (under 0.1% of any
/// share) and the check of the assembled object (its hash), which the paper's formula leaves out too.
/// </summary>
public static class ScaledLoadReplay
{
    /// <summary>Fig. 12's object sizes.</summary>
    public static IReadOnlyList<long> PaperSizes { get; } = [400_000, 40_000_000, 400_000_000, 800_000_000];

    /// <summary>The most instances the replay tries (fixed N = 1 .. this), as the bandwidth-scaling benchmark does.</summary>
    public const int MaxInstances = 6;

    /// <summary>The paper's BW_Inst (§6.1: "750MB/s network bandwidth" per Standard_DS4_v2 VM).</summary>
    public const double PaperPeerBytesPerSecond = 750e6;

    /// <summary>
    /// The paper's measured gains at N = 4 over one instance, in percent (§6.5), by (size, cold); 400 KB has none (more
    /// instances are slower).
    /// </summary>
    public static IReadOnlyDictionary<(long SizeBytes, bool Cold), double> PaperImprovementPct { get; } = new Dictionary<(long, bool), double>
    {
        [(40_000_000, false)] = 47,
        [(400_000_000, false)] = 47,
        [(800_000_000, false)] = 60,
        [(400_000_000, true)] = 9,
        [(800_000_000, true)] = 44,
    };

    /// <summary>The N the paper quotes its gains at.</summary>
    public const int PaperInstances = 4;

    /// <summary>The N the cachelet uses: <see cref="BandwidthPlanner.Plan"/> for an object it splits, else 1.</summary>
    /// <param name="sizeBytes">S.</param>
    /// <param name="running">Instances running (the requester included).</param>
    /// <param name="maxInstances">The most instances a plan may use.</param>
    /// <param name="links">The transfer profile.</param>
    /// <returns>N.</returns>
    public static int PlannedInstances(long sizeBytes, int running, int maxInstances, TransferProfile links)
        => ScaledLoadModel.Splits(sizeBytes) ? BandwidthPlanner.Plan(sizeBytes, running, maxInstances, links).Instances : 1;

    /// <summary>The time to download <paramref name="sizeBytes"/> over <paramref name="instances"/> instances, in seconds.</summary>
    /// <param name="sizeBytes">S.</param>
    /// <param name="instances">N, the requester included (1: the requester alone).</param>
    /// <param name="cold">True when the N - 1 helpers are started for this load (each joins T_Load later).</param>
    /// <param name="links">BW_BS, storage first byte, BW_Inst, peer first byte and (for cold helpers) T_Load.</param>
    /// <returns>Seconds from the request to the last byte.</returns>
    /// <exception cref="InvalidOperationException">A bandwidth, or T_Load for cold helpers, is not in <paramref name="links"/>.</exception>
    public static double Seconds(long sizeBytes, int instances, bool cold, TransferProfile links)
        => ScaledLoadModel.Seconds(sizeBytes, instances, running: cold ? 1 : instances, links);

    /// <summary>Every size of <paramref name="sizes"/> at N = 1 .. <paramref name="maxInstances"/>, running then cold helpers.</summary>
    /// <param name="sizes">The object sizes.</param>
    /// <param name="links">The transfer profile (with T_Load).</param>
    /// <param name="maxInstances">The largest N.</param>
    /// <returns>One row per size, helper state and N.</returns>
    public static IReadOnlyList<ScaledLoadRow> Run(IEnumerable<long> sizes, TransferProfile links, int maxInstances = MaxInstances)
    {
        ArgumentNullException.ThrowIfNull(sizes);
        var rows = new List<ScaledLoadRow>();
        foreach (long size in sizes)
        {
            double alone = Seconds(size, 1, cold: false, links);
            foreach (bool cold in new[] { false, true })
            {
                // Running: every helper is up (the benchmark's six); cold: the requester alone until the controller starts more.
                int planned = PlannedInstances(size, cold ? 1 : maxInstances, maxInstances, links);
                for (int n = 1; n <= maxInstances; n++)
                {
                    double t = Seconds(size, n, cold, links);
                    rows.Add(new ScaledLoadRow(size, cold, n, t, 100 * (alone - t) / alone, planned));
                }
            }
        }

        return rows;
    }

    /// <summary>Writes <paramref name="rows"/> as <c>size_bytes,helpers,instances,seconds,improvement_pct,planner_n</c>.</summary>
    /// <param name="path">The CSV file to create.</param>
    /// <param name="rows">The replay's rows.</param>
    public static void WriteCsv(string path, IEnumerable<ScaledLoadRow> rows)
    {
        ArgumentNullException.ThrowIfNull(rows);
        File.WriteAllLines(path, ["size_bytes,helpers,instances,seconds,improvement_pct,planner_n", .. rows.Select(r => string.Create(
            CultureInfo.InvariantCulture,
            $"{r.SizeBytes},{(r.Cold ? "cold" : "running")},{r.Instances},{r.Seconds:F4},{r.ImprovementPct:F1},{r.PlannerInstances}"))]);
    }
}
