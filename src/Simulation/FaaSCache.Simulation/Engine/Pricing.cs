namespace FaaSCache.Simulation.Engine;

/// <summary>
/// One way of pricing a replay. The paper's §6.2 says only that its simulator used latencies measured with its
/// implementation for 1 B to 2 GB objects and the default policies (<c>strong</c>); §6.1 that vanilla performs as FaaS$
/// LM; §3.2 that verifying a version takes "less than 5 ms" against a 10 ms read. So the version check and what a miss
/// adds are choices, and the benchmark prices the same replay under each of them side by side.
/// </summary>
/// <param name="Profile"><c>paper</c> (<see cref="StorageProfile.Paper"/>, with <paramref name="VersionCheckMs"/>) or <c>measured</c> (the CSVs' own storage).</param>
/// <param name="Preset"><c>strong</c> (hits pay the version check) or <c>owner</c> (they do not).</param>
/// <param name="VersionCheckMs">The version check under the paper's profile (0 under <c>owner</c>; under <c>measured</c>, what the CSVs measured).</param>
/// <param name="MissOverhead">True: a miss is vanilla plus what this implementation measurably adds; false: a miss is vanilla.</param>
public sealed record Pricing(string Profile, string Preset, double VersionCheckMs, bool MissOverhead = true)
{
    /// <summary>Gets a value indicating whether hits pay the version check.</summary>
    public bool Strong => Preset == "strong";

    /// <summary>Gets the name in tables and the CSV's <c>miss</c> column: <c>measured</c> (vanilla plus the overhead) or <c>vanilla</c>.</summary>
    public string Miss => MissOverhead ? "measured" : "vanilla";

    /// <summary>Gets a label such as <c>paper, strong, check 2.5 ms, miss = vanilla</c>.</summary>
    public string Label => string.Create(
        CultureInfo.InvariantCulture,
        $"{Profile}, {Preset}{(Strong && Profile == "paper" ? $", check {VersionCheckMs:0.##} ms" : string.Empty)}{(MissOverhead ? string.Empty : ", miss = vanilla")}");

    /// <summary>The paper's setting as this repository reads it: <c>strong</c>, the check at the paper's upper bound (5 ms), a miss with its measured overhead.</summary>
    public static Pricing PaperStrong { get; } = new("paper", "strong", StorageProfile.Paper.VersionCheckMs);

    /// <summary>The version checks of the sensitivity rows (§3.2: "less than 5 ms").</summary>
    public static IReadOnlyList<double> VersionCheckSensitivityMs { get; } = [1, 2.5, 5];

    /// <summary>
    /// Every pricing the simulate benchmark reports: the paper's profile under <c>strong</c> at each check of
    /// <see cref="VersionCheckSensitivityMs"/> and at the fraction of a first byte measured here (when it is under the
    /// paper's bound; at or above it, the 5 ms row stands for it), under <c>owner</c>, each with a miss priced with and
    /// without the measured overhead; and the CSVs' own storage under both presets. The first is
    /// <see cref="PaperStrong"/>, the one the voters see.
    /// </summary>
    /// <param name="measuredCheckFraction">The version check over a first byte as measured here (<see cref="LatencyModel.MeasuredVersionCheckFraction"/>).</param>
    /// <param name="measuredCheckMs">The version check measured here, in milliseconds (the <c>measured</c> rows' <see cref="VersionCheckMs"/>).</param>
    public static IReadOnlyList<Pricing> All(double measuredCheckFraction, double measuredCheckMs)
    {
        double bound = StorageProfile.Paper.VersionCheckMs;
        double measuredCheck = Math.Round(measuredCheckFraction * StorageProfile.Paper.FirstByteMs, 2);
        List<Pricing> all = [PaperStrong];
        foreach (double check in VersionCheckSensitivityMs.Append(measuredCheck).Where(c => c < bound).Distinct())
        {
            all.Add(new Pricing("paper", "strong", check));
        }

        all.Add(new Pricing("paper", "owner", 0));
        all.Add(PaperStrong with { MissOverhead = false });
        all.Add(new Pricing("paper", "owner", 0, MissOverhead: false));
        all.Add(new Pricing("measured", "strong", Math.Round(measuredCheckMs, 3)));
        all.Add(new Pricing("measured", "owner", 0));
        return all;
    }

    /// <summary>The latency model this pricing costs accesses with, from the benchmark CSVs in <paramref name="resultsDirectory"/>.</summary>
    public LatencyModel Load(string resultsDirectory)
    {
        StorageProfile? storage = Profile switch
        {
            "paper" => StorageProfile.Paper with { VersionCheckMs = Strong ? VersionCheckMs : StorageProfile.Paper.VersionCheckMs },
            "measured" => null,
            _ => throw new ArgumentException($"Unknown storage profile '{Profile}' in a pricing (paper or measured)."),
        };
        return LatencyModel.Load(resultsDirectory, Strong, storage, MissOverhead);
    }
}
