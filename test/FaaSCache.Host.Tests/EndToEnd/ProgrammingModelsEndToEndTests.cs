using System.Text.Json;
using FaaSCache.Diagnostics;
using FaaSCache.Testing;
using Xunit;

namespace FaaSCache.Host.Tests.EndToEnd;

/// <summary>
/// Today's programming models through the built host, unchanged: a Python v2 app (function_app.py, decorators, a
/// Blueprint) and a Node.js v4 app (the real @azure/functions 4.16.5), both indexed by their worker. The same scenarios
/// as the function.json apps: a local miss then a zero-copy local hit, a cache write firing both pipeline stages once;
/// and a timer trigger.
/// </summary>
[Collection(AzuriteCollection.Name)]
[Trait("Category", "Integration")]
public sealed class ProgrammingModelsEndToEndTests(AzuriteFixture azurite)
{
    [Fact]
    public async Task Python_v2_a_blob_input_is_a_local_miss_then_a_zero_copy_local_hit_and_the_output_lands_in_storage()
    {
        var app = PythonV2App.Create();
        await using RunningHost running = await RunningHost.StartAsync(azurite, app.Build);

        IReadOnlyList<JsonElement> responses = await SharedScenarios.LocalMissThenZeroCopyLocalHitAsync(running, app);

        Assert.All(responses, r => Assert.True(r.GetProperty("stream").GetBoolean(), "the input was bound as a func.InputStream"));
        HostStatus status = await running.Host.GetStatusAsync();
        Assert.Equal(["Cars", "Detect", "People", "ReadModel", "Tick"], status.Functions.Order(StringComparer.Ordinal));
    }

    [Fact]
    public async Task Python_v2_a_cache_write_fires_both_blueprint_stages_once()
    {
        var app = PythonV2App.Create();
        await using RunningHost running = await RunningHost.StartAsync(azurite, app.Build, extraArgs: SharedScenarios.PollEvery(0.5));

        await SharedScenarios.CacheWriteFiresBothStagesOnceAsync(running, app);
    }

    [Fact]
    public async Task Python_v2_a_timer_trigger_fires_on_its_schedule()
    {
        var app = PythonV2App.Create();
        await using RunningHost running = await RunningHost.StartAsync(azurite, app.Build);

        await TimerFiresAsync(running, app.Ticks);
    }

    [NodeV4Fact]
    public async Task Node_v4_a_blob_input_is_a_local_miss_then_a_zero_copy_local_hit_and_the_output_lands_in_storage()
    {
        var app = NodeV4App.Create();
        await using RunningHost running = await RunningHost.StartAsync(azurite, app.Build);

        IReadOnlyList<JsonElement> responses = await SharedScenarios.LocalMissThenZeroCopyLocalHitAsync(running, app);

        Assert.All(responses, r => Assert.True(r.GetProperty("buffer").GetBoolean(), "the blob input is a Buffer"));
        Assert.Equal("node", Assert.Single((await running.Host.GetStatusAsync()).Workers).Language);
    }

    [NodeV4Fact]
    public async Task Node_v4_a_cache_write_fires_both_storageBlob_stages_once()
    {
        var app = NodeV4App.Create();
        await using RunningHost running = await RunningHost.StartAsync(azurite, app.Build, extraArgs: SharedScenarios.PollEvery(0.5));

        await SharedScenarios.CacheWriteFiresBothStagesOnceAsync(running, app);
    }

    [NodeV4Fact]
    public async Task Node_v4_a_timer_trigger_fires_on_its_schedule()
    {
        var app = NodeV4App.Create();
        await using RunningHost running = await RunningHost.StartAsync(azurite, app.Build);

        await TimerFiresAsync(running, app.Ticks);
    }

    private static async Task TimerFiresAsync(RunningHost running, string container)
    {
        IReadOnlyList<InvocationRecord> ticks = await running.Host.WaitForInvocationsAsync("Tick", 2, TimeSpan.FromSeconds(20), r => r.Status == "succeeded");
        Assert.All(ticks, t => Assert.Equal("timer", t.Trigger));
        using JsonDocument last = JsonDocument.Parse(await running.DownloadAsync(container, "last.txt"));
        Assert.Equal(JsonValueKind.False, last.RootElement.GetProperty("past_due").ValueKind);
    }
}

/// <summary>A fact that needs the Node.js worker and the v4 test apps' @azure/functions (both installed by scripts/setup.sh).</summary>
public sealed class NodeV4FactAttribute : FactAttribute
{
    public NodeV4FactAttribute()
    {
        string library = Path.Combine(NodeV4App.Dependencies, "node_modules", "@azure", "functions");
        if (!Directory.Exists(Path.Combine(RepositoryRoot.Find(), "src", "Workers", "node", "node_modules")) || !Directory.Exists(library))
        {
            Skip = $"The Node.js worker or '{library}' is not installed (run scripts/setup.sh).";
        }
    }
}
