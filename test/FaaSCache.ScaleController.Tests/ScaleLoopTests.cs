using System.Net;
using FaaSCache.Cluster;
using FaaSCache.Hosting;
using FaaSCache.ScaleController.FrontDoor;
using FaaSCache.ScaleController.Grpc;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging.Abstractions;

namespace FaaSCache.ScaleController.Tests;

/// <summary>
/// The poll over real gRPC: an instance that answers (a real InstanceScale server on loopback) and one that does not (a
/// port nothing listens on). The app scales in only when every instance wants in, so an unknown vote must not count as one.
/// </summary>
[Trait("Category", "Integration")]
public sealed class ScaleLoopTests
{
    [Fact]
    public async Task An_instance_that_does_not_answer_its_poll_keeps_the_app_from_scaling_in_until_it_answers()
    {
        int port = FreePorts.Get();
        await using WebApplication answering = await StartVotingInAsync(port);
        var votesIn = new Uri($"http://127.0.0.1:{port}/");
        var silent = new Uri($"http://127.0.0.1:{FreePorts.Get()}/");
        var pool = new ListedInstances();
        pool.List("app-1", votesIn);
        pool.List("app-2", silent);
        var options = new ScaleControllerOptions { AppName = "app", MinInstances = 1, MaxInstances = 3, ScaleInCooldown = TimeSpan.Zero, ScaleOutCooldown = TimeSpan.Zero };
        using var client = new InstanceVoteClient(PeerKey.Derive("secret", "app"), TimeProvider.System);
        var coordinator = new ScaleCoordinator(
            new ScalePolicy(options, TimeProvider.System),
            pool,
            new FrontDoorTraffic(TimeProvider.System),
            new DecisionHistory(16),
            new ScaleDecisionState(options),
            NullLogger<ScaleCoordinator>.Instance);
        var loop = new ScaleLoop(coordinator, pool, client, options, TimeProvider.System, NullLogger<ScaleLoop>.Instance);

        // app-1 wants in; app-2's votes are unknown: the app keeps its two instances and says why.
        ScaleDecision unknown = await loop.PollOnceAsync(CancellationToken.None);
        Assert.Equal((2, 2), (unknown.From, unknown.To));
        Assert.Contains($"app-2/{ScaleLoop.UnansweredVoter}: did not answer the poll", unknown.Reason, StringComparison.Ordinal);
        Assert.Equal(ScaleDirection.None, coordinator.LastVotes!.Direction);

        // app-2 answers (in, as app-1): every instance wants in, so the app scales in.
        pool.List("app-2", votesIn);
        ScaleDecision answered = await loop.PollOnceAsync(CancellationToken.None);
        Assert.Equal((2, 1), (answered.From, answered.To));
        Assert.Equal(ScaleDirection.In, coordinator.LastVotes!.Direction);
    }

    private static async Task<WebApplication> StartVotingInAsync(int port)
    {
        WebApplicationBuilder builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.ConfigureKestrel(k => k.Listen(IPAddress.Loopback, port, l => l.Protocols = HttpProtocols.Http2));
        builder.Services.AddGrpc();
        WebApplication app = builder.Build();
        app.MapGrpcService<VotingIn>();
        await app.StartAsync();
        return app;
    }

    /// <summary>An instance's vote service that wants in (an idle instance).</summary>
    private sealed class VotingIn : InstanceScale.InstanceScaleBase
    {
        public override Task<VoteReport> GetVotes(VoteQuery request, ServerCallContext context) =>
            Task.FromResult(new VoteReport { Votes = { new Vote { Voter = "compute", Vote_ = -1, Reason = "in: idle" } } });
    }

    /// <summary>Members found in a list (membership mode's shape): ready, each at its peer address.</summary>
    private sealed class ListedInstances : IInstanceSource
    {
        private readonly List<ManagedInstance> _members = [];

        public int LiveCount => _members.Count;

        public TimeSpan? MeasuredLoadTime => null;

        public string LoadTimeNote => "not measured in this test";

        public void List(string id, Uri peer)
        {
            _members.RemoveAll(m => m.Id == id);
            _members.Add(new ManagedInstance(id, DateTimeOffset.UtcNow) { MemberEndpoint = peer, State = InstanceState.Ready });
        }

        public IReadOnlyList<ManagedInstance> Snapshot() => [.. _members];

        public IReadOnlyList<ManagedInstance> Ready() => [.. _members];

        public Task RefreshAsync(CancellationToken cancellationToken) => Task.CompletedTask;

        public void ScaleTo(int target)
        {
            // Membership mode: the count is only recorded (KEDA acts on it).
        }

        public void Fail(ManagedInstance instance, string error) => _members.Remove(instance);
    }
}
