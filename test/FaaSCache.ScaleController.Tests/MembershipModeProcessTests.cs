namespace FaaSCache.ScaleController.Tests;

/// <summary>
/// Membership mode with real processes: two FaaSCache hosts of one app join its membership blob in Azurite (as KEDA's
/// pods would), the controller finds and polls them, and KEDA reads the decided count from its gRPC port.
/// </summary>
[Trait("Category", "Integration")]
public sealed class MembershipModeProcessTests(AzuriteFixture azurite, ITestOutputHelper output) : AzuriteTests
{
    [Fact]
    public async Task Finds_the_apps_hosts_in_the_membership_blob_polls_their_votes_and_serves_the_desired_count_to_KEDA_without_running_anything()
    {
        using FunctionAppFolder app = ControllerUnderTest.BuildApp();
        string appName = "k8sapp" + Guid.NewGuid().ToString("N")[..8];
        await using HostProcessCluster cluster = await HostProcessCluster.StartAsync(app.Path, azurite.ConnectionString, appName, 2, output.WriteLine);
        await using ControllerUnderTest controller = await ControllerUnderTest.StartAsync(azurite.ConnectionString, output, o =>
        {
            o.Instances = InstanceSourceMode.Membership;
            o.ScriptRoot = "";
            o.HostDll = "";
            o.AppName = appName;
            o.MinInstances = 2;
            o.MaxInstances = 3;
        });

        // Both hosts listed, each with the votes it answered over gRPC at its peer endpoint; T_Load is not known here.
        ScaleStatusReport status = await controller.WaitForAsync(
            s => s.Instances.Count(i => i.State == "ready" && i.LastVotes is { Votes.Count: > 0 }) == 2 && s.Decisions.Count > 0,
            ControllerUnderTest.Wait,
            "both hosts polled");
        Assert.Equal("membership", status.Mode);
        Assert.Equal(cluster.Ids.Order(StringComparer.Ordinal), status.Instances.Where(i => i.State == "ready").Select(i => i.Id).Order(StringComparer.Ordinal));
        Assert.All(status.Instances, i => Assert.NotNull(i.PeerEndpoint));
        Assert.All(status.Instances, i => Assert.Null(i.Pid));
        Assert.Null(status.InstanceLoadSeconds);
        Assert.StartsWith("unknown in membership mode", status.InstanceLoadNote, StringComparison.Ordinal);
        Assert.Equal(2, status.Desired);

        Assert.Equal(2, (await controller.KedaAsync(appName)).Metric);

        // An urgent vote raises the count KEDA reads; nothing is launched: still the two hosts.
        UrgentVoteReply reply = await controller.ReportVoteAsync(
            new UrgentVote { App = appName, InstanceId = cluster.Ids[0], Voter = "bandwidth", TargetWorkerCount = 3, Reason = "a large miss" },
            PeerKey.FromConnectionString(azurite.ConnectionString, appName));
        Assert.True(reply.Accepted, reply.Reason);
        Assert.Equal(3, (await controller.KedaAsync(appName)).Metric);
        Assert.Equal(2, (await controller.GetStatusAsync()).Current);

        // No front door: /api/* says why.
        using HttpResponseMessage api = await controller.Http.GetAsync(new Uri("api/ping", UriKind.Relative));
        Assert.Equal(HttpStatusCode.NotImplemented, api.StatusCode);
        Assert.Contains("--instances membership", await api.Content.ReadAsStringAsync(), StringComparison.Ordinal);

        // A host that stops leaves the blob, and so the controller's list.
        string leaving = cluster.Ids[1];
        await cluster.Instance(leaving).Host.StopAsync();
        await controller.WaitForAsync(s => s.Instances.Any(i => i.Id == leaving && i.State == "stopped") && s.Current == 1, ControllerUnderTest.Wait, $"{leaving} gone from the list");
    }

    [Fact]
    public async Task With_a_member_http_port_the_front_door_routes_api_requests_to_the_members_at_their_advertised_address()
    {
        using FunctionAppFolder app = ControllerUnderTest.BuildApp();
        string appName = "k8sfront" + Guid.NewGuid().ToString("N")[..8];
        await using HostProcessCluster cluster = await HostProcessCluster.StartAsync(app.Path, azurite.ConnectionString, appName, 1, output.WriteLine);
        ClusterInstance host = cluster.Instances[0];
        await using ControllerUnderTest controller = await ControllerUnderTest.StartAsync(azurite.ConnectionString, output, o =>
        {
            o.Instances = InstanceSourceMode.Membership;
            o.ScriptRoot = "";
            o.HostDll = "";
            o.AppName = appName;
            o.MemberHttpPort = host.Host.BaseUri.Port; // every pod of a Deployment has the same port; one member here
        });
        await controller.WaitForAsync(s => s.Instances.Count(i => i.State == "ready") == 1, ControllerUnderTest.Wait, "the host found");

        // The member's advertised (peer) address with the members' HTTP port: the host answers through the controller.
        string body = "";
        for (var deadline = Stopwatch.StartNew(); deadline.Elapsed < ControllerUnderTest.Wait && body != "pong";)
        {
            using HttpResponseMessage response = await controller.Http.GetAsync(new Uri("api/ping", UriKind.Relative));
            body = await response.Content.ReadAsStringAsync();
            if (body != "pong")
            {
                await Task.Delay(200);
            }
        }

        Assert.Equal("pong", body);
        Assert.Contains(await host.Host.GetInvocationsAsync(), i => i.Function == "Ping");
    }
}
