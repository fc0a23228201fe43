namespace FaaSCache.ScaleController.Tests;

/// <summary>The controller with real host processes (Node.js app) against Azurite. Each host start costs seconds: few tests.</summary>
[Trait("Category", "Integration")]
public sealed class ScaleControllerProcessTests(AzuriteFixture azurite, ITestOutputHelper output) : AzuriteTests
{
    private static readonly TimeSpan Wait = ControllerUnderTest.Wait;

    [Fact]
    public async Task Scales_an_idle_app_to_zero_and_back_with_the_request_held_until_an_instance_is_ready()
    {
        await using ControllerUnderTest controller = await ControllerUnderTest.StartAsync(azurite.ConnectionString, output, o =>
        {
            o.IdleToZero = TimeSpan.FromSeconds(2);
            o.ScaleInCooldown = TimeSpan.FromSeconds(1);
        });
        Assert.Equal(0, (await controller.GetStatusAsync()).Current);

        using HttpResponseMessage first = await controller.Http.GetAsync(new Uri("api/ping", UriKind.Relative));
        Assert.Equal(HttpStatusCode.OK, first.StatusCode);
        Assert.Equal("pong", await first.Content.ReadAsStringAsync());

        ScaleStatusReport idle = await controller.WaitForAsync(s => s.Current == 0 && s.Instances.All(i => i.State == "stopped"), Wait, "scaled to zero");
        using HttpResponseMessage second = await controller.Http.GetAsync(new Uri("api/ping", UriKind.Relative));
        Assert.Equal(HttpStatusCode.OK, second.StatusCode);

        ScaleStatusReport status = await controller.GetStatusAsync();
        List<ScaleDecision> changes = [.. status.Decisions.Where(d => d.Changes)];
        Assert.Equal(2, changes.Count(d => d is { Trigger: ScaleTrigger.FrontDoor, From: 0, To: 1 }));
        Assert.Contains(changes, d => d.To == 0 && d.Reason.StartsWith("idle", StringComparison.Ordinal));
        Assert.Contains(idle.Instances, i => i.LoadSeconds > 0);
        Assert.Equal(1, status.Current);
    }

    [Fact]
    public async Task An_urgent_vote_with_the_apps_token_starts_instances_and_a_scale_in_drains_without_failing_a_request()
    {
        await using ControllerUnderTest controller = await ControllerUnderTest.StartAsync(azurite.ConnectionString, output, o =>
        {
            o.MaxInstances = 3;
            o.IdleToZero = TimeSpan.FromMinutes(10);
            o.ScaleInCooldown = TimeSpan.FromMinutes(10);
        });
        UrgentVoteReply reply = await controller.ReportVoteAsync(
            new UrgentVote { App = controller.Options.AppName, InstanceId = "outside", Voter = "bandwidth", TargetWorkerCount = 2, Reason = "a large miss" },
            PeerKey.FromConnectionString(azurite.ConnectionString, controller.Options.AppName));

        Assert.True(reply.Accepted, reply.Reason);
        Assert.Equal(2, reply.WorkerCount);
        await controller.WaitForAsync(s => s.Instances.Count(i => i.State == "ready") == 2, Wait, "two instances ready");

        // KEDA, asking the controller's gRPC port as its operator does, sees the same decision: 2 instances, active.
        Assert.Equal((2.0, true), await controller.KedaAsync(controller.Options.AppName));

        // Slow requests on both instances, then drain one while they run; more requests arrive during the drain.
        Task<HttpResponseMessage>[] slow = [.. Enumerable.Range(0, 8).Select(_ => controller.Http.GetAsync(new Uri("api/slow?ms=3000", UriKind.Relative)))];
        await controller.WaitForAsync(s => s.Instances.Where(i => i.State == "ready").All(i => i.InFlight > 0), Wait, "requests in flight on both instances");
        ManagedInstance drained = controller.Pool.Ready().OrderByDescending(i => i.LaunchedAt).First();
        int inFlightAtDrain = drained.InFlight;
        controller.Pool.ScaleTo(1);
        Assert.Equal(InstanceState.Draining, drained.State);
        Task<HttpResponseMessage>[] during = [.. Enumerable.Range(0, 4).Select(_ => controller.Http.GetAsync(new Uri("api/ping", UriKind.Relative)))];

        HttpResponseMessage[] answers = await Task.WhenAll([.. slow, .. during]);
        await controller.WaitForAsync(s => s.Instances.Any(i => i.Id == drained.Id && i.State == "stopped"), Wait, "the drained instance stopped");

        Assert.True(inFlightAtDrain > 0);
        Assert.All(answers, a => Assert.Equal(HttpStatusCode.OK, a.StatusCode));
        Assert.Equal(1, controller.Pool.LiveCount);
        foreach (HttpResponseMessage answer in answers)
        {
            answer.Dispose();
        }
    }

    [Fact]
    public async Task An_urgent_vote_without_a_valid_token_of_the_app_is_refused()
    {
        await using ControllerUnderTest controller = await ControllerUnderTest.StartAsync(azurite.ConnectionString, output, _ => { });
        var vote = new UrgentVote { App = controller.Options.AppName, InstanceId = "intruder", Voter = "bandwidth", TargetWorkerCount = 3, Reason = "let me in" };

        RpcException wrongKey = await Assert.ThrowsAsync<RpcException>(() => controller.ReportVoteAsync(vote, PeerKey.Derive("another storage secret", controller.Options.AppName)));
        RpcException none = await Assert.ThrowsAsync<RpcException>(() => controller.ReportVoteAsync(vote, key: null));

        Assert.Equal(StatusCode.PermissionDenied, wrongKey.StatusCode);
        Assert.Equal(StatusCode.Unauthenticated, none.StatusCode);
        ScaleStatusReport status = await controller.GetStatusAsync();
        Assert.Equal(0, status.Current);
        Assert.DoesNotContain(status.Decisions, d => d.Trigger == ScaleTrigger.Urgent);
    }
}
