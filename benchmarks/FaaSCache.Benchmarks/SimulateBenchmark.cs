using System.Diagnostics;
using System.Globalization;
using FaaSCache.Simulation.Engine;
using FaaSCache.Simulation.Trace;
using FaaSCache.Storage;

namespace FaaSCache.Benchmarks;

/// <summary>
/// The paper's Fig. 8: the Azure-shaped synthetic trace (44.3 M accesses; --quick 1 M) replayed through the
/// cachelet's own policy code at 32 MB .. 1 GB per cachelet, with and without pre-warm; per-app improvement over no
/// cache, <c>simulate.csv</c>, the CDF at 128 MB (<c>simulate.png</c>), the average by size (<c>simulate-avg.png</c>),
/// the simulator's throughput and peak memory.
/// </summary>
internal static class SimulateBenchmark
{
    private const long QuickAccesses = 1_000_000;
    private const long CdfCapacityMb = 128;
    private static readonly long[] CapacitiesMb = [32, 64, 128, 256, 512, 1024];
    private static readonly bool[] PrewarmOffOn = [false, true];

    public static async Task RunAsync(BenchmarkContext context)
    {
        context.WriteHeader("simulate");
        var generatorOptions = new TraceGeneratorOptions { Accesses = context.Quick ? QuickAccesses : AzureTraceShape.Accesses };
        var simulation = new SimulationOptions();
        // Two storage profiles side by side: `measured` (the CSVs' own storage, Azurite on this machine) and `paper` (the
        // Faa$T storage: 10 ms to the first byte, 5 ms a version check, 90 MB/s), each costed for strong (simulate.csv,
        // the paper's setting: hits pay a version check) and for the owner presets (simulate-owner.csv).
        StorageProfile?[] profiles = [null, StorageProfile.Paper];
        string[] profileNames = ["measured", "paper"];
        var latencies = new List<LatencyModel>();
        var modelNames = new List<string>();
        foreach ((StorageProfile? profile, string profileName) in profiles.Zip(profileNames))
        {
            foreach (bool strong in new[] { true, false })
            {
                latencies.Add(LatencyModel.Load(context.ResultsDirectory, strong, profile));
                modelNames.Add($"{profileName}, {(strong ? "strong" : "owner")}");
            }
        }

        PolicySet[] policies = [.. CapacitiesMb.SelectMany(mb => PrewarmOffOn.Select(prewarm => new PolicySet { CapacityBytes = mb << 20, Prewarm = prewarm }))];
        context.Output.WriteLine(string.Create(
            CultureInfo.InvariantCulture,
            $"trace: {generatorOptions.Accesses:N0} accesses over {generatorOptions.Apps} apps, seed {generatorOptions.Seed}, at most {generatorOptions.MaxAccessesPerApp:N0} per app"));
        context.Output.WriteLine(string.Create(
            CultureInfo.InvariantCulture,
            $"simulation: {policies.Length} policy sets (lru, 32 MB .. 1 GB, pre-warm off/on), costed under {string.Join("; ", modelNames)}: the cache's own costs from {LatencyModel.CacheletReadFile} and {LatencyModel.RemoteReadFile}, storage's from the profile; unload after {simulation.UnloadAfterIdle.TotalMinutes} min idle, <= {simulation.MaxInstances} instances per app"));
        context.Output.WriteLine($"storage profiles: measured (Azurite on this machine, as the CSVs have it); {StorageProfile.Paper}");

        var stopwatch = Stopwatch.StartNew();
        var statistics = new TraceStatistics();
        var simulator = new FleetSimulator(policies, latencies, simulation);
        FleetResult result = await simulator.RunAsync(AppGrouping.Group(statistics.Count(new TraceGenerator(generatorOptions).Generate())), context.Cancellation);
        stopwatch.Stop();

        PrintStatistics(context.Output, statistics);
        var summaries = modelNames.Select((_, m) => result.Summaries(m)).ToArray();
        for (int m = 0; m < modelNames.Count; m++)
        {
            context.Output.WriteLine();
            context.Output.WriteLine($"{modelNames[m]}:");
            context.Output.WriteLine($"{"cache",8} {"prewarm",8} {"avg %",8} {"p50 %",8} {">=50%",8} {"hit rate",9}");
            foreach (PolicySummary s in summaries[m])
            {
                context.Output.WriteLine(string.Create(
                    CultureInfo.InvariantCulture,
                    $"{s.Policy.CapacityBytes >> 20,6}MB {(s.Policy.Prewarm ? "on" : "off"),8} {s.AvgImprovementPct,8:F1} {s.P50ImprovementPct,8:F1} {s.AppsOver50PctShare * 100,7:F1}% {s.HitRate * 100,8:F1}%"));
            }
        }

        int strongPaper = modelNames.IndexOf("paper, strong");
        PolicySummary fig8 = summaries[strongPaper].First(s => s.Policy.CapacityBytes == CdfCapacityMb << 20 && s.Policy.Prewarm);
        context.Output.WriteLine();
        context.Output.WriteLine(string.Create(
            CultureInfo.InvariantCulture,
            $"Fig. 8 with the paper's storage, {CdfCapacityMb} MB with pre-warm, strong: average improvement {fig8.AvgImprovementPct:F1}% (paper: > 40%), apps improved by 50% or more {fig8.AppsOver50PctShare * 100:F1}% (paper: ~35%)"));
        bool prewarmBetter = CapacitiesMb.All(mb => summaries[strongPaper].First(s => s.Policy.CapacityBytes == mb << 20 && s.Policy.Prewarm).AvgImprovementPct
                                                   >= summaries[strongPaper].First(s => s.Policy.CapacityBytes == mb << 20 && !s.Policy.Prewarm).AvgImprovementPct);
        context.Output.WriteLine($"pre-warm better than without at every cache size (paper, strong): {(prewarmBetter ? "yes" : "no")}");

        string csv = Path.Combine(context.ResultsDirectory, "simulate.csv");
        SummaryCsv.Write(csv, [(profileNames[0], summaries[modelNames.IndexOf("measured, strong")]), (profileNames[1], summaries[strongPaper])]);
        string ownerCsv = Path.Combine(context.ResultsDirectory, "simulate-owner.csv");
        SummaryCsv.Write(ownerCsv, [(profileNames[0], summaries[modelNames.IndexOf("measured, owner")]), (profileNames[1], summaries[modelNames.IndexOf("paper, owner")])]);
        string cdf = Path.Combine(context.ResultsDirectory, "simulate.png");
        int on = Array.FindIndex(policies, p => p.CapacityBytes == CdfCapacityMb << 20 && p.Prewarm);
        int off = Array.FindIndex(policies, p => p.CapacityBytes == CdfCapacityMb << 20 && !p.Prewarm);
        ImprovementPlots.SaveCdf(
            cdf,
            $"simulate: improvement per app, {CdfCapacityMb} MB cache ({result.Results[on].Count} apps)",
            [.. modelNames.SelectMany((name, m) => new[] { ($"{name}, with pre-warm", result.Results[on], m), ($"{name}, without pre-warm", result.Results[off], m) })]);
        string avg = Path.Combine(context.ResultsDirectory, "simulate-avg.png");
        ImprovementPlots.SaveAverageBySize(avg, "simulate: average improvement by cache size", [.. modelNames.Select((name, m) => (name, summaries[m]))]);

        double seconds = stopwatch.Elapsed.TotalSeconds;
        using Process self = Process.GetCurrentProcess();
        long peak = self.PeakWorkingSet64;
        // CPU time says more than wall time on a shared machine: the load of other processes stretches the latter.
        double cpuSeconds = self.TotalProcessorTime.TotalSeconds;
        context.Output.WriteLine();
        context.Output.WriteLine(string.Create(
            CultureInfo.InvariantCulture,
            $"throughput: {result.Accesses:N0} trace accesses in {seconds:F1} s = {result.Accesses / seconds:N0} accesses/s ({result.Accesses * policies.Length / seconds:N0} access replays/s over {policies.Length} policy sets, {Environment.ProcessorCount} CPUs)"));
        context.Output.WriteLine(string.Create(
            CultureInfo.InvariantCulture,
            $"cpu time: {cpuSeconds:F1} s = {result.Accesses / cpuSeconds:N0} accesses per CPU-second (load average now {File.ReadAllText("/proc/loadavg").Split(' ')[0]})"));
        context.Output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"peak memory: {peak / (1024.0 * 1024):F0} MiB (Process.PeakWorkingSet64)"));
        context.Output.WriteLine($"paper (Fig. 8, 128 MB with pre-warm): average improvement > 40%, ~35% of apps improve by 50% or more");
        context.Output.WriteLine($"results: {csv} (strong), {ownerCsv} (owner), {cdf}, {avg}; each CSV's first column names the storage profile");
    }

    /// <summary>The generated trace against the statistics the generator claims (Faa$T §2), side by side.</summary>
    private static void PrintStatistics(TextWriter output, TraceStatistics s)
    {
        var p = TraceStatistics.Published;
        string Row(string what, double ours, double paper) =>
            string.Create(CultureInfo.InvariantCulture, $"  {what,-48} {ours * 100,7:F1}%  {paper * 100,7:F1}%  {(Math.Abs(ours - paper) <= paper * 0.10 ? "within 10%" : "NOT within 10%")}");
        output.WriteLine();
        output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"the trace against the published statistics ({s.Accesses:N0} accesses, {s.Apps} apps):      ours    paper"));
        output.WriteLine(Row("apps that reuse a blob across invocations", s.ReuseShare, p.ReuseShare));
        output.WriteLine(Row("first accesses (no cache can serve them)", s.FirstAccessShare, p.FirstAccessShare));
        output.WriteLine(Row("traffic an ideal cache saves", s.TrafficSaved, p.TrafficSaved));
        output.WriteLine(Row("accesses an ideal cache saves", s.AccessesSaved, p.AccessesSaved));
    }
}
