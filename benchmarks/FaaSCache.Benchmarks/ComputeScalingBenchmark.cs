using FaaSCache.ScaleController;
using FaaSCache.ScaleController.Instances;
using FaaSCache.ScaleController.Options;
using Microsoft.AspNetCore.Builder;

namespace FaaSCache.Benchmarks;

/// <summary>
/// compute-scaling: a bounded open-loop HTTP load ramp through the scale controller's front door (up, plateau, down,
/// then idle until the app is back at zero instances) against a Node.js function that waits 200 ms per request, so
/// the compute voter's concurrency drives the count. Per second: instances, answered requests, p50/p99 latency and
/// failures, to benchmarks/results/compute-scaling.csv and a ScottPlot PNG beside it.
/// </summary>
internal static class ComputeScalingBenchmark
{
    private const int WorkMs = 200;
    private const int MaxInFlight = 1000;

    public static async Task RunAsync(BenchmarkContext context)
    {
        context.WriteHeader("compute-scaling");
        Phase[] phases = context.Quick
            ? [new("up", 20, 0, 40), new("plateau", 20, 40, 40), new("down", 10, 40, 0)]
            : [new("up", 60, 0, 80), new("plateau", 60, 80, 80), new("down", 30, 80, 0)];
        TimeSpan idleToZero = TimeSpan.FromSeconds(context.Quick ? 10 : 20);
        TimeSpan idleLimit = idleToZero + TimeSpan.FromSeconds(60);
        await using AzuriteServer azurite = await context.StartAzuriteAsync();
        using FunctionAppFolder app = BuildApp();
        using var shm = new TempShmDirectory("faascache-bench-scale");
        var options = new ScaleControllerOptions
        {
            ScriptRoot = app.Path,
            AppName = "computescaling",
            StorageConnection = azurite.ConnectionString,
            HostDll = FaaSCacheHostProcess.FindHostDll(),
            Port = 0,
            GrpcPort = 0,
            SharedMemoryRoot = shm.Path,
            EnforceKeys = false,
            MaxInstances = context.Quick ? 3 : 4,
            PollInterval = TimeSpan.FromSeconds(1),
            ScaleInCooldown = TimeSpan.FromSeconds(10),
            IdleToZero = idleToZero,
            HoldTimeout = TimeSpan.FromSeconds(120),
        };
        context.Output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"ramp: {string.Join(", ", phases.Select(p => $"{p.Name} {p.Seconds} s {p.FromRps}->{p.ToRps} rps"))}, then idle until 0 instances (idleToZero {idleToZero.TotalSeconds} s); function waits {WorkMs} ms; max {options.MaxInstances} instances"));
        WebApplication controller = ScaleControllerApp.Build(options, logging: l => l.ClearProviders());
        await controller.StartAsync(context.Cancellation);
        var rows = new List<ScalingRow>();
        try
        {
            InstancePool pool = controller.Services.GetRequiredService<InstancePool>();
            using var http = new HttpClient(new SocketsHttpHandler { UseProxy = false, MaxConnectionsPerServer = MaxInFlight })
            {
                BaseAddress = new Uri($"http://127.0.0.1:{options.Port}/"),
                Timeout = TimeSpan.FromSeconds(150),
            };
            var load = new LoadRecorder();
            var clock = Stopwatch.StartNew();
            int second = 0;
            foreach (Phase phase in phases)
            {
                for (int s = 0; s < phase.Seconds; s++, second++)
                {
                    double rps = phase.FromRps + ((phase.ToRps - phase.FromRps) * (s + 0.5) / phase.Seconds);
                    await FireSecondAsync(http, load, clock, second, rps, context.Cancellation);
                    rows.Add(Sample(load, pool, second, context.Output));
                }
            }

            // Idle: no requests until the app is back at zero (bounded).
            for (int s = 0; s < idleLimit.TotalSeconds && (s < 2 || pool.LiveCount > 0); s++, second++)
            {
                await WaitUntilAsync(clock, second + 1, context.Cancellation);
                rows.Add(Sample(load, pool, second, context.Output));
            }

            await load.DrainAsync();
            int failed = rows.Sum(r => r.Failed) + load.TakeSecond().Failed;
            context.Output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"sent {load.Sent} requests, {failed} failed; peak {rows.Max(r => r.Instances)} instances; {(pool.LiveCount == 0 ? "back at 0 instances" : $"still {pool.LiveCount} instance(s) at the end")}"));
        }
        finally
        {
            await controller.StopAsync(CancellationToken.None);
            await controller.DisposeAsync();
        }

        Directory.CreateDirectory(context.ResultsDirectory);
        string csv = Path.Combine(context.ResultsDirectory, "compute-scaling.csv");
        await File.WriteAllLinesAsync(csv, ["t_s,instances,rps,p50_ms,p99_ms,failed", .. rows.Select(r => r.ToCsv())]);
        string png = Path.ChangeExtension(csv, ".png");
        ComputeScalingPlot.Save(rows, png);
        context.Output.WriteLine($"wrote {csv} and {png}");
    }

    private static async Task FireSecondAsync(HttpClient http, LoadRecorder load, Stopwatch clock, int second, double rps, CancellationToken cancellationToken)
    {
        int count = (int)Math.Round(rps);
        for (int i = 0; i < count; i++)
        {
            await WaitUntilAsync(clock, second + ((double)i / count), cancellationToken);
            load.Send(http, new Uri($"api/work?ms={WorkMs}", UriKind.Relative), MaxInFlight);
        }

        await WaitUntilAsync(clock, second + 1, cancellationToken);
    }

    private static async Task WaitUntilAsync(Stopwatch clock, double atSeconds, CancellationToken cancellationToken)
    {
        TimeSpan wait = TimeSpan.FromSeconds(atSeconds) - clock.Elapsed;
        if (wait > TimeSpan.Zero)
        {
            await Task.Delay(wait, cancellationToken);
        }
    }

    private static ScalingRow Sample(LoadRecorder load, InstancePool pool, int second, TextWriter output)
    {
        (List<double> latencies, int failed) = load.TakeSecond();
        latencies.Sort();
        var row = new ScalingRow(second + 1, pool.Ready().Count, latencies.Count, Percentile(latencies, 0.50), Percentile(latencies, 0.99), failed);
        output.WriteLine(row.ToCsv());
        return row;
    }

    private static double Percentile(List<double> sorted, double q) =>
        sorted.Count == 0 ? double.NaN : sorted[Math.Clamp((int)Math.Ceiling(q * sorted.Count) - 1, 0, sorted.Count - 1)];

    private static FunctionAppFolder BuildApp() => NodeHttpApp.Create("faascache-bench-scaleapp")
        .WithWaitingFunction("Work", "work", "'done'")
        .Build();

    private sealed record Phase(string Name, int Seconds, double FromRps, double ToRps);
}

/// <summary>One second of the run: the CSV row.</summary>
internal sealed record ScalingRow(int Second, int Instances, int Rps, double P50Ms, double P99Ms, int Failed)
{
    public string ToCsv() => string.Create(CultureInfo.InvariantCulture, $"{Second},{Instances},{Rps},{Ms(P50Ms)},{Ms(P99Ms)},{Failed}");

    private static string Ms(double value) => double.IsNaN(value) ? "" : value.ToString("0.0", CultureInfo.InvariantCulture);
}
