using System.Net.Http.Json;
using System.Text.Json.Serialization;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace FaaSCache.ScaleController.Tests;

/// <summary>
/// The real controller, in process, on free ports, running real FaaSCache host processes of a Node.js app (Ping and
/// Slow) against Azurite; dispose stops it (and so every instance) and removes the instances' shared memory.
/// </summary>
internal sealed class ControllerUnderTest(WebApplication web, ScaleControllerOptions options, FunctionAppFolder app, TempShmDirectory shm) : IAsyncDisposable
{
    /// <summary>How long a process test waits for the controller's status to reach what it expects (instances start in seconds).</summary>
    public static readonly TimeSpan Wait = TimeSpan.FromSeconds(120);

    private const string ReportVoteMethod = "/faascache.scale.ScaleController/ReportVote";
    private static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web) { Converters = { new JsonStringEnumConverter() } };

    public WebApplication Web => web;

    public ScaleControllerOptions Options { get; } = options;

    public HttpClient Http { get; } = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{options.Port}/"), Timeout = TimeSpan.FromSeconds(180) };

    public InstancePool Pool => Web.Services.GetRequiredService<InstancePool>();

    public Uri GrpcAddress => new($"http://127.0.0.1:{Options.GrpcPort}/");

    public static async Task<ControllerUnderTest> StartAsync(string storageConnection, ITestOutputHelper output, Action<ScaleControllerOptions> configure)
    {
        FunctionAppFolder app = BuildApp();
        var shm = new TempShmDirectory("faascache-scale-test");
        var options = new ScaleControllerOptions
        {
            ScriptRoot = app.Path,
            AppName = "scaletest" + Guid.NewGuid().ToString("N")[..8],
            StorageConnection = storageConnection,
            HostDll = FaaSCacheHostProcess.FindHostDll(),
            Port = 0,
            GrpcPort = 0,
            SharedMemoryRoot = shm.Path,
            PollInterval = TimeSpan.FromMilliseconds(500),
            HoldTimeout = TimeSpan.FromSeconds(120),
            EnforceKeys = false, // local development, as the hosts the tests start; the key tests turn it on
        };
        configure(options);
        WebApplication? web = null;
        try
        {
            web = ScaleControllerApp.Build(options, logging: l => l.ClearProviders().AddProvider(new TestOutputLoggerProvider(output)));
            await web.StartAsync();
            return new ControllerUnderTest(web, options, app, shm);
        }
        catch
        {
            if (web is not null)
            {
                await web.DisposeAsync();
            }

            shm.Dispose();
            app.Dispose();
            throw;
        }
    }

    public async Task<ScaleStatusReport> GetStatusAsync() =>
        await Http.GetFromJsonAsync<ScaleStatusReport>("scale/status", Json) ?? throw new InvalidOperationException("/scale/status answered null.");

    /// <summary>Waits (at most <paramref name="timeout"/>) until <paramref name="condition"/> holds for the status; returns it.</summary>
    public async Task<ScaleStatusReport> WaitForAsync(Func<ScaleStatusReport, bool> condition, TimeSpan timeout, string what)
    {
        using var limit = new CancellationTokenSource(timeout);
        ScaleStatusReport status = await GetStatusAsync();
        while (!condition(status))
        {
            if (limit.IsCancellationRequested)
            {
                throw new TimeoutException($"Not {what} after {timeout.TotalSeconds:0} s: {JsonSerializer.Serialize(status, Json)}");
            }

            await Task.Delay(100);
            status = await GetStatusAsync();
        }

        return status;
    }

    /// <summary>
    /// Sends <paramref name="vote"/> to the controller's gRPC port as a host's voter does, with a token of
    /// <paramref name="key"/> (no token when null).
    /// </summary>
    public async Task<UrgentVoteReply> ReportVoteAsync(UrgentVote vote, PeerKey? key)
    {
        using GrpcChannel channel = GrpcChannel.ForAddress(GrpcAddress);
        var client = new Scaling.Protocol.ScaleController.ScaleControllerClient(channel);
        Metadata? token = key is null ? null : new Metadata { { PeerWire.AuthHeader, key.CreateToken(ReportVoteMethod, DateTimeOffset.UtcNow) } };
        return await client.ReportVoteAsync(vote, token);
    }

    /// <summary>What KEDA reads for <paramref name="app"/> from the controller's gRPC port, asking as its operator does.</summary>
    public async Task<(double Metric, bool Active)> KedaAsync(string app)
    {
        using GrpcChannel channel = GrpcChannel.ForAddress(GrpcAddress);
        var keda = new Keda.ExternalScaler.ExternalScaler.ExternalScalerClient(channel);
        var scaled = new Keda.ExternalScaler.ScaledObjectRef { Name = "faascache-host", Namespace = "faascache" };
        scaled.ScalerMetadata.Add("app", app);
        Keda.ExternalScaler.GetMetricsResponse metrics = await keda.GetMetricsAsync(new Keda.ExternalScaler.GetMetricsRequest { ScaledObjectRef = scaled, MetricName = Keda.KedaMetric.Name });
        return (Assert.Single(metrics.MetricValues).MetricValueFloat, (await keda.IsActiveAsync(scaled)).Result);
    }

    public async ValueTask DisposeAsync()
    {
        try
        {
            await Web.StopAsync();
        }
        finally
        {
            await Web.DisposeAsync();
            Http.Dispose();
            shm.Dispose();
            app.Dispose();
        }
    }

    internal static FunctionAppFolder BuildApp() => NodeHttpApp.Create("faascache-scaleapp")
        .WithWaitingFunction("Ping", "ping", "'pong'")
        .WithWaitingFunction("Slow", "slow", "`slept ${ms} ms`")
        .Build();
}
