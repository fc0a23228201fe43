using System.Net.Http.Json;
using System.Text.Json;
using System.Text.Json.Serialization;
using FaaSCache.ScaleController.Instances;
using FaaSCache.ScaleController.Options;
using FaaSCache.ScaleController.Status;
using FaaSCache.Testing;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Xunit.Abstractions;

namespace FaaSCache.ScaleController.Tests;

/// <summary>
/// The real controller, in process, on free ports, running real FaaSCache host processes of a Node.js app (Ping and
/// Slow) against Azurite; dispose stops it (and so every instance) and removes the instances' shared memory.
/// </summary>
internal sealed class ControllerUnderTest : IAsyncDisposable
{
    private static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web) { Converters = { new JsonStringEnumConverter() } };
    private readonly FunctionAppFolder _app;
    private readonly TempShmDirectory _shm;

    private ControllerUnderTest(WebApplication web, ScaleControllerOptions options, FunctionAppFolder app, TempShmDirectory shm)
    {
        Web = web;
        Options = options;
        _app = app;
        _shm = shm;
        Http = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{options.Port}/"), Timeout = TimeSpan.FromSeconds(180) };
    }

    public WebApplication Web { get; }

    public ScaleControllerOptions Options { get; }

    public HttpClient Http { get; }

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
            _shm.Dispose();
            _app.Dispose();
        }
    }

    internal static FunctionAppFolder BuildApp() => new FunctionAppBuilder { NamePrefix = "faascache-scaleapp" }
        .WithSetting("FUNCTIONS_WORKER_RUNTIME", "node")
        .WithFunction("Ping", """
            { "bindings": [
                { "authLevel": "anonymous", "type": "httpTrigger", "direction": "in", "name": "req", "methods": ["get"], "route": "ping" },
                { "type": "http", "direction": "out", "name": "res" } ] }
            """, ("index.js", """
            module.exports = async function (context, req) {
                context.res = { status: 200, body: 'pong' };
            };
            """))
        .WithFunction("Slow", """
            { "bindings": [
                { "authLevel": "anonymous", "type": "httpTrigger", "direction": "in", "name": "req", "methods": ["get"], "route": "slow" },
                { "type": "http", "direction": "out", "name": "res" } ] }
            """, ("index.js", """
            module.exports = async function (context, req) {
                const ms = parseInt(req.query.ms || '0', 10);
                await new Promise(resolve => setTimeout(resolve, ms));
                context.res = { status: 200, body: `slept ${ms} ms` };
            };
            """))
        .Build();
}
