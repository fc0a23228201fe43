using System.Diagnostics;
using System.Globalization;
using FaaSCache.Simulation.Engine;
using FaaSCache.Simulation.Trace;

namespace FaaSCache.Benchmarks;

/// <summary>
/// The paper's Fig. 8 (issue 14): the Azure-shaped synthetic trace (44.3 M accesses; --quick 1 M) replayed through the
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
        // The paper's setting (strong: hits pay a version check in storage) writes simulate.csv; the same replays costed
        // without the check (the owner* presets) write simulate-owner.csv.
        LatencyModel[] latencies = [LatencyModel.Load(context.ResultsDirectory, strongConsistency: true), LatencyModel.Load(context.ResultsDirectory, strongConsistency: false)];
        string[] modelNames = ["strong", "owner"];
        PolicySet[] policies = [.. CapacitiesMb.SelectMany(mb => PrewarmOffOn.Select(prewarm => new PolicySet { CapacityBytes = mb << 20, Prewarm = prewarm }))];
        context.Output.WriteLine(string.Create(
            CultureInfo.InvariantCulture,
            $"trace: {generatorOptions.Accesses:N0} accesses over {generatorOptions.Apps} apps, seed {generatorOptions.Seed}, at most {generatorOptions.MaxAccessesPerApp:N0} per app"));
        context.Output.WriteLine(string.Create(
            CultureInfo.InvariantCulture,
            $"simulation: {policies.Length} policy sets (lru, 32 MB .. 1 GB, pre-warm off/on), costed with strong and with owner consistency latencies from {LatencyModel.CacheletReadFile} and {LatencyModel.RemoteReadFile}, unload after {simulation.UnloadAfterIdle.TotalMinutes} min idle, <= {simulation.MaxInstances} instances per app"));

        var stopwatch = Stopwatch.StartNew();
        var simulator = new FleetSimulator(policies, latencies, simulation);
        FleetResult result = await simulator.RunAsync(AppGrouping.Group(new TraceGenerator(generatorOptions).Generate()), context.Cancellation);
        stopwatch.Stop();

        var summaries = modelNames.Select((_, m) => result.Summaries(m)).ToArray();
        for (int m = 0; m < modelNames.Length; m++)
        {
            context.Output.WriteLine();
            context.Output.WriteLine($"consistency {modelNames[m]}:");
            context.Output.WriteLine($"{"cache",8} {"prewarm",8} {"avg %",8} {"p50 %",8} {">=50%",8} {"hit rate",9}");
            foreach (PolicySummary s in summaries[m])
            {
                context.Output.WriteLine(string.Create(
                    CultureInfo.InvariantCulture,
                    $"{s.Policy.CapacityBytes >> 20,6}MB {(s.Policy.Prewarm ? "on" : "off"),8} {s.AvgImprovementPct,8:F1} {s.P50ImprovementPct,8:F1} {s.AppsOver50PctShare * 100,7:F1}% {s.HitRate * 100,8:F1}%"));
            }
        }

        string csv = Path.Combine(context.ResultsDirectory, "simulate.csv");
        SummaryCsv.Write(csv, summaries[0]);
        string ownerCsv = Path.Combine(context.ResultsDirectory, "simulate-owner.csv");
        SummaryCsv.Write(ownerCsv, summaries[1]);
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
        context.Output.WriteLine($"results: {csv} (strong), {ownerCsv} (owner), {cdf}, {avg}");
    }
}
