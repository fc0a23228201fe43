using FaaSCache.Simulation.Engine;
using FaaSCache.Simulation.WhatIf;

namespace FaaSCache.Tools;

/// <summary>
/// <c>faascache what-if --log access-log.csv</c>: replays one app's access log (the Azure blob trace's columns, CSV or
/// Parquet, as <c>faascache start --access-log</c> writes it; or Azure Storage's own request logs, JSON lines) under a grid of host.json policy sets and prints which wins, with the expected hit rate and latency of each.
/// </summary>
public static class WhatIfCommand
{
    /// <summary>Creates the command.</summary>
    /// <returns>The command.</returns>
    public static Command Create()
    {
        var log = new Option<string>("--log")
        {
            Description = "The app's accesses: the file `faascache start --access-log` writes, any CSV or .parquet with the Azure blob trace's columns (Timestamp, AnonAppName, AnonFunctionInvocationId, AnonBlobName, AnonBlobETag, BlobBytes, Read, Write, ...), or Azure Storage's own request logs (StorageBlobLogs from a diagnostic setting, JSON lines: .json, .jsonl).",
            Required = true,
        };
        var app = new Option<string>("--app") { Description = "The app to replay when the log holds several (AnonAppName; the storage account in a StorageBlobLogs file)." };
        var results = new Option<string>("--results") { Description = "The directory with the latency benchmarks' CSVs (cachelet-read.csv, remote-read.csv). Default: benchmarks/results of the checkout the tool was built in, or under the current directory." };
        var top = new Option<int>("--top") { Description = "Rows of the ranking to print.", DefaultValueFactory = _ => 15 };
        var profile = new Option<string>("--storage-profile")
        {
            Description = "What storage costs: measured (this machine's Azurite, as the benchmark CSVs have it), paper (the Faa$T storage: 10 ms first byte, 5 ms version check, 90 MB/s) or a file written by `faascache storage probe --out` (your account).",
            DefaultValueFactory = _ => "measured",
        };
        var idle = new Option<double>("--unload-after-minutes") { Description = "Minutes without invocations before the app is unloaded, for policy sets without pre-warm (those with pre-warm are kept alive and loaded again by the hybrid histogram, as the scale controller does).", DefaultValueFactory = _ => new SimulationOptions().UnloadAfterIdle.TotalMinutes };
        var command = new Command("what-if", "Replay one app's access log under host.json policy sets (capacity, eviction, size threshold, TTL, pre-warm) and print which wins.")
        {
            log, app, results, top, idle, profile,
        };
        command.SetAction(async (r, cancellationToken) =>
        {
            if (r.GetValue(top) < 1 || !(r.GetValue(idle) > 0))
            {
                await Console.Error.WriteLineAsync($"--top must be at least 1 (got {r.GetValue(top)}) and --unload-after-minutes positive (got {r.GetValue(idle)}).");
                return Program.UsageError;
            }

            try
            {
                var options = new SimulationOptions { UnloadAfterIdle = TimeSpan.FromMinutes(r.GetValue(idle)) };
                if ((r.GetValue(results) ?? FindResults()) is not { } resultsDirectory)
                {
                    await Console.Error.WriteLineAsync(
                        $"faascache what-if: no latency results found (looked for benchmarks/results/{Required} under {Environment.CurrentDirectory} and above {AppContext.BaseDirectory}): "
                        + "pass --results DIR, the benchmarks/results folder of a FaaSCache checkout (or the output of `benchmarks/run cachelet-read` and `remote-read`).");
                    return 1;
                }

                LatencyModel latency = LatencyModel.Load(resultsDirectory, options.StrongConsistency, LatencyModel.ProfileNamed(r.GetValue(profile)!));
                Console.WriteLine($"storage profile: {latency.Profile}");
                AppTrace trace = await WhatIfReport.LoadAppAsync(r.GetValue(log)!, r.GetValue(app), cancellationToken);
                IReadOnlyList<WhatIfOutcome> ranking = WhatIfAnalyzer.Rank(trace, WhatIfAnalyzer.DefaultGrid(), latency, options);
                WhatIfReport.Write(Console.Out, trace, AppLayout.For(trace, options), ranking, r.GetValue(top));
                return 0;
            }
            catch (Exception e) when (e is FileNotFoundException or FormatException or InvalidDataException)
            {
                await Console.Error.WriteLineAsync(e.Message);
                return 1;
            }
        });
        return command;
    }

    private const string Required = "cachelet-read.csv";

    /// <summary>benchmarks/results under the current directory, else in the checkout the tool runs from (walking up from it).</summary>
    private static string? FindResults()
    {
        foreach (string start in new[] { Environment.CurrentDirectory, AppContext.BaseDirectory })
        {
            for (DirectoryInfo? dir = new(start); dir is not null; dir = dir.Parent)
            {
                string candidate = Path.Combine(dir.FullName, "benchmarks", "results");
                if (File.Exists(Path.Combine(candidate, Required)))
                {
                    return candidate;
                }
            }
        }

        return null;
    }
}
