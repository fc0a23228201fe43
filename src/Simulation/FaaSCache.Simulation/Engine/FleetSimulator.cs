using System.Threading.Channels;

namespace FaaSCache.Simulation.Engine;

/// <summary>
/// Replays every app of a trace under several policy sets: apps are built one at a time on a producer thread (memory
/// holds at most two apps), and each app's policy sets run in parallel over the machine's cores.
/// </summary>
public sealed class FleetSimulator
{
    private readonly IReadOnlyList<PolicySet> _policies;
    private readonly IReadOnlyList<LatencyModel> _latencies;
    private readonly SimulationOptions _options;

    /// <summary>Creates the simulator.</summary>
    /// <param name="policies">The policy sets to compare.</param>
    /// <param name="latencies">The latency models each replay is costed under (the first is the main one).</param>
    /// <param name="options">The simulation options.</param>
    public FleetSimulator(IReadOnlyList<PolicySet> policies, IReadOnlyList<LatencyModel> latencies, SimulationOptions options)
    {
        ArgumentNullException.ThrowIfNull(policies);
        ArgumentNullException.ThrowIfNull(latencies);
        ArgumentNullException.ThrowIfNull(options);
        _ = new SimulationOptionsValidator().ThrowIfInvalid(options);
        if (latencies.Count == 0)
        {
            throw new ArgumentException("At least one latency model is needed.", nameof(latencies));
        }

        _policies = policies;
        _latencies = latencies;
        _options = options;
    }

    /// <summary>Runs every app of <paramref name="apps"/> (enumerated on a background thread) under every policy set.</summary>
    /// <param name="apps">The apps, e.g. <see cref="AppGrouping.Group"/> over a generator or a file.</param>
    /// <param name="cancellationToken">Stops the run between apps.</param>
    /// <returns>The per-app results of each policy set.</returns>
    public async Task<FleetResult> RunAsync(IAsyncEnumerable<AppTrace> apps, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(apps);
        var results = _policies.Select(_ => new List<AppResult>()).ToArray();
        long accesses = 0;
        // One app waits while another is simulated: generation or parsing overlaps the replay.
        var channel = Channel.CreateBounded<AppTrace>(new BoundedChannelOptions(1) { SingleReader = true, SingleWriter = true });
        Task producer = Task.Run(
            async () =>
            {
                try
                {
                    await foreach (AppTrace app in apps.WithCancellation(cancellationToken).ConfigureAwait(false))
                    {
                        await channel.Writer.WriteAsync(app, cancellationToken).ConfigureAwait(false);
                    }

                    channel.Writer.Complete();
                }
                catch (Exception e)
                {
                    channel.Writer.Complete(e);
                }
            },
            cancellationToken);

        await foreach (AppTrace app in channel.Reader.ReadAllAsync(cancellationToken).ConfigureAwait(false))
        {
            AppLayout layout = AppLayout.For(app, _options);
            var appResults = new AppResult[_policies.Count];
            Parallel.For(
                0,
                _policies.Count,
                // One replay per core at a time: a big app's replay holds its cache state, so this bounds memory too.
                new ParallelOptions { CancellationToken = cancellationToken, MaxDegreeOfParallelism = Environment.ProcessorCount },
                p => appResults[p] = AppSimulator.Run(app, layout, _policies[p], _latencies, _options));
            for (int p = 0; p < _policies.Count; p++)
            {
                results[p].Add(appResults[p]);
            }

            accesses += app.Count;
        }

        await producer.ConfigureAwait(false);
        return new FleetResult(_policies, results, accesses);
    }

    /// <summary>Runs the apps of a synchronous source (the generator).</summary>
    /// <param name="apps">The apps.</param>
    /// <param name="cancellationToken">Stops the run between apps.</param>
    /// <returns>The per-app results of each policy set.</returns>
    public Task<FleetResult> RunAsync(IEnumerable<AppTrace> apps, CancellationToken cancellationToken = default)
        => RunAsync(ToAsync(apps), cancellationToken);

    private static async IAsyncEnumerable<AppTrace> ToAsync(IEnumerable<AppTrace> apps)
    {
        foreach (AppTrace app in apps)
        {
            yield return app;
        }

        await Task.CompletedTask.ConfigureAwait(false);
    }
}
