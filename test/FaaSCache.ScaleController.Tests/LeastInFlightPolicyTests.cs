using FaaSCache.ScaleController.FrontDoor;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging.Abstractions;
using Yarp.ReverseProxy.Model;

namespace FaaSCache.ScaleController.Tests;

/// <summary>The front door's pick counts the request at once, so a burst spreads over the instances (no process).</summary>
[Trait("Category", "Unit")]
public sealed class LeastInFlightPolicyTests
{
    [Fact]
    public async Task A_burst_of_simultaneous_requests_is_spread_evenly_and_a_draining_instance_gets_none()
    {
        await using InstancePool pool = await ReadyPoolAsync(3);
        var policy = new LeastInFlightPolicy(pool);
        DestinationState[] destinations = [.. pool.Ready().Select(i => new DestinationState(i.Id))];
        var cluster = new ClusterState(FrontDoorRoutes.ClusterId);

        // Nine requests picked before any of them is forwarded (or ends): three each.
        string[] picks = [.. Enumerable.Range(0, 9).Select(_ => Pick(policy, cluster, destinations))];

        Assert.All(picks.GroupBy(p => p), g => Assert.Equal(3, g.Count()));
        Assert.All(pool.Ready(), i => Assert.Equal(3, i.InFlight));

        // One instance drains: the next picks go to the others only.
        IReadOnlyList<ManagedInstance> before = pool.Ready();
        pool.ScaleTo(2);
        ManagedInstance drained = Assert.Single(before, i => i.State == InstanceState.Draining);
        string[] later = [.. Enumerable.Range(0, 4).Select(_ => Pick(policy, cluster, destinations))];
        Assert.Equal(3, drained.InFlight);
        Assert.DoesNotContain(drained.Id, later);
        Assert.All(later.GroupBy(p => p), g => Assert.Equal(2, g.Count()));
    }

    [Fact]
    public async Task The_tracker_uses_the_picks_count_and_a_pick_for_another_destination_is_given_back()
    {
        await using InstancePool pool = await ReadyPoolAsync(2);
        var policy = new LeastInFlightPolicy(pool);
        DestinationState[] destinations = [.. pool.Ready().Select(i => new DestinationState(i.Id))];
        var context = new DefaultHttpContext();

        DestinationState picked = policy.PickDestination(context, new ClusterState(FrontDoorRoutes.ClusterId), destinations)!;
        ManagedInstance instance = pool.Find(picked.DestinationId)!;
        string other = destinations.Single(d => d.DestinationId != picked.DestinationId).DestinationId;

        Assert.Equal(1, instance.InFlight);
        Assert.Null(LeastInFlightPolicy.TakeEntered(context, other));
        Assert.Equal(0, instance.InFlight);
        Assert.Null(LeastInFlightPolicy.TakeEntered(context, picked.DestinationId));
    }

    private static string Pick(LeastInFlightPolicy policy, ClusterState cluster, IReadOnlyList<DestinationState> destinations) =>
        policy.PickDestination(new DefaultHttpContext(), cluster, destinations)!.DestinationId;

    private static async Task<InstancePool> ReadyPoolAsync(int count)
    {
        var options = new ScaleControllerOptions { AppName = "balance", MaxInstances = count };
        var pool = new InstancePool(new InstantLauncher(), options, TimeProvider.System, NullLogger<InstancePool>.Instance);
        pool.ScaleTo(count);
        using var limit = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        while (pool.Ready().Count < count)
        {
            await Task.Delay(10, limit.Token);
        }

        return pool;
    }

    /// <summary>Launches nothing: an instance that is ready at once and stops at once.</summary>
    private sealed class InstantLauncher : IInstanceLauncher
    {
        public Task<ILaunchedInstance> LaunchAsync(string instanceId, CancellationToken cancellationToken) =>
            Task.FromResult<ILaunchedInstance>(new Instant(instanceId));

        private sealed class Instant(string id) : ILaunchedInstance
        {
            public string Id { get; } = id;

            public Uri HttpEndpoint { get; } = new("http://127.0.0.1:1/");

            public Uri PeerEndpoint { get; } = new("http://127.0.0.1:1/");

            public TimeSpan LoadTime => TimeSpan.Zero;

            public int ProcessId => 0;

            public bool HasExited => false;

            public string OutputTail => "";

            public Task StopAsync(TimeSpan timeout) => Task.CompletedTask;

            public ValueTask DisposeAsync() => ValueTask.CompletedTask;
        }
    }
}
