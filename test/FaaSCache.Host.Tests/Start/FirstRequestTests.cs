using System.Diagnostics;
using System.Net;
using FaaSCache.Host.Tests.EndToEnd;

namespace FaaSCache.Host.Tests.Start;

/// <summary>
/// Right from the first request (issue 32): requests fired every 50 ms from the moment the host's port opens get no 404
/// and no 503 in today's programming models; they wait while the worker indexes and loads, as the Functions host holds
/// them, and the first 200 comes when it is done. The status says Initializing until then, never Running with no functions.
/// </summary>
[Trait("Category", "Integration")]
public sealed class FirstRequestTests(AzuriteFixture azurite, ITestOutputHelper output) : AzuriteTests
{
    [Theory]
    [InlineData("python-v2")]
    [InlineData("node-v4")]
    [InlineData("dotnet-isolated")]
    public async Task Requests_fired_every_50_ms_from_the_moment_the_port_opens_get_no_404_and_no_503(string model)
    {
        (Func<FunctionAppFolder> build, string container, string path) = model switch
        {
            "python-v2" => App(new PythonV2App()),
            "node-v4" => App(new NodeV4App()),
            _ => (() => DotnetBuildOutput.Link("benchmarks", "apps", "dotnet-isolated"), "bench", "api/touch/first.bin"),
        };
        await azurite.CreateServiceClient().GetBlobContainerClient(container).CreateIfNotExistsAsync();
        await azurite.CreateServiceClient().GetBlobContainerClient(container).GetBlobClient(path.EndsWith("first.bin", StringComparison.Ordinal) ? "first.bin" : "m.bin")
            .UploadAsync(BinaryData.FromBytes(new byte[1024]), overwrite: true);
        using FunctionAppFolder app = build();
        using var shm = new TempShmDirectory();
        var clock = Stopwatch.StartNew();
        await using FaaSCacheHostProcess host = await FaaSCacheHostProcess.StartAsync(app.Path, azurite.ConnectionString, shm.Path);
        double portOpen = clock.Elapsed.TotalSeconds;
        HostStatus first = await host.GetStatusAsync();

        // From the moment the port answers: a request every 50 ms, until one has answered 200 and five more were sent.
        using var http = new HttpClient { BaseAddress = host.BaseUri, Timeout = TimeSpan.FromSeconds(90) };
        var requests = new List<Task<(HttpStatusCode Status, double At)>>();
        var statuses = new List<HostStatus> { first };
        var firstOk = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        int sentAfterOk = 0;
        while (clock.Elapsed < TimeSpan.FromSeconds(60) && sentAfterOk < 5)
        {
            requests.Add(SendAsync(http, path, clock, firstOk));
            sentAfterOk += firstOk.Task.IsCompleted ? 1 : 0;
            statuses.Add(await host.GetStatusAsync());
            await Task.Delay(50);
        }

        (HttpStatusCode Status, double At)[] answers = await Task.WhenAll(requests);
        output.WriteLine($"{model}: port open {portOpen:0.00} s after start, first status {first.State}, first 200 at {answers.Where(a => a.Status == HttpStatusCode.OK).Min(a => a.At):0.00} s; {answers.Length} requests");
        Assert.All(answers, a => Assert.Equal(HttpStatusCode.OK, a.Status));
        Assert.Contains(first.State, new[] { "Initializing", "Running" });
        Assert.All(statuses.Where(s => s.State == "Running"), s => Assert.NotEmpty(s.Functions));
        Assert.Equal("Running", statuses[^1].State);
    }

    [Fact]
    public async Task A_slow_indexing_app_is_Initializing_in_status_and_metrics_and_a_request_past_the_ready_timeout_gets_503()
    {
        using FunctionAppFolder app = PipelineApp.NewBuilder("faascache-slowapp", "python")
            .WithFile("function_app.py", """
                import time

                import azure.functions as func

                time.sleep(6)  # indexing takes a while, as a large app's imports do
                app = func.FunctionApp(http_auth_level=func.AuthLevel.ANONYMOUS)


                @app.route(route="hello", methods=["GET"])
                def hello(req: func.HttpRequest) -> func.HttpResponse:
                    return func.HttpResponse("hello")
                """)
            .Build();
        using var shm = new TempShmDirectory();
        await using FaaSCacheHostProcess host = await FaaSCacheHostProcess.StartAsync(app.Path, azurite.ConnectionString, shm.Path,
            extraArgs: new Dictionary<string, string> { ["--ready-timeout"] = "1" });
        using var http = new HttpClient { BaseAddress = host.BaseUri, Timeout = TimeSpan.FromSeconds(60) };

        HostStatus status = await host.GetStatusAsync();
        string metrics = await http.GetStringAsync("metrics");
        using HttpResponseMessage early = await http.GetAsync("api/hello");
        using HttpResponseMessage ready = await http.GetAsync("admin/host/ready");

        Assert.Equal("Initializing", status.State);
        Assert.Matches("faascache_host_state\\{[^}]*state=\"Initializing\"\\} 1", metrics);
        Assert.Equal(HttpStatusCode.ServiceUnavailable, early.StatusCode);
        Assert.Equal(FaaSCache.Host.Start.HostLifecycle.NotRunningMessage, await early.Content.ReadAsStringAsync());
        Assert.Equal(HttpStatusCode.ServiceUnavailable, ready.StatusCode);

        await host.WaitForWorkersAsync();
        Assert.Equal("hello", await http.GetStringAsync("api/hello"));
        Assert.Equal("Running", (await host.GetStatusAsync()).State);
        Assert.Matches("faascache_host_state\\{[^}]*state=\"Running\"\\} 1", await http.GetStringAsync("metrics"));
        Assert.Equal(HttpStatusCode.OK, (await http.GetAsync("admin/host/ready")).StatusCode);
    }

    private static (Func<FunctionAppFolder> Build, string Container, string Path) App(PipelineApp app) => (app.Build, app.Models, "api/ReadModel?name=m.bin");

    private static async Task<(HttpStatusCode Status, double At)> SendAsync(HttpClient http, string path, Stopwatch clock, TaskCompletionSource firstOk)
    {
        using HttpResponseMessage response = await http.GetAsync(path);
        if (response.StatusCode == HttpStatusCode.OK)
        {
            firstOk.TrySetResult();
        }

        return (response.StatusCode, clock.Elapsed.TotalSeconds);
    }
}
