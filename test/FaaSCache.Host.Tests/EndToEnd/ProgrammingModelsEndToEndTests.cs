namespace FaaSCache.Host.Tests.EndToEnd;

/// <summary>
/// Today's programming models through the built host, unchanged: a Python v2 app (function_app.py, decorators, a
/// Blueprint) and a Node.js v4 app (the real @azure/functions 4.16.5), both indexed by their worker. The same scenarios
/// as the function.json apps: a local miss then a zero-copy local hit, a cache write firing both pipeline stages once;
/// and a timer trigger.
/// </summary>
[Trait("Category", "Integration")]
public sealed class ProgrammingModelsEndToEndTests(AzuriteFixture azurite) : AzuriteTests
{
    [Fact]
    public async Task Python_v2_a_blob_input_is_a_local_miss_then_a_zero_copy_local_hit_and_the_output_lands_in_storage()
    {
        HostStatus status = await SharedScenarios.LocalMissThenZeroCopyLocalHitAsync(azurite, new PythonV2App());

        Assert.Equal(["Cars", "Detect", "People", "ReadModel", "Tick"], status.Functions.Order(StringComparer.Ordinal));
    }

    [Fact]
    public Task Python_v2_a_cache_write_fires_both_blueprint_stages_once() =>
        SharedScenarios.CacheWriteFiresBothStagesOnceAsync(azurite, new PythonV2App());

    [Fact]
    public Task Python_v2_a_timer_trigger_fires_on_its_schedule() => SharedScenarios.TimerFiresAsync(azurite, new PythonV2App());

    [NodeV4Fact]
    public Task Node_v4_a_blob_input_is_a_local_miss_then_a_zero_copy_local_hit_and_the_output_lands_in_storage() =>
        SharedScenarios.LocalMissThenZeroCopyLocalHitAsync(azurite, new NodeV4App());

    [NodeV4Fact]
    public Task Node_v4_a_cache_write_fires_both_storageBlob_stages_once() =>
        SharedScenarios.CacheWriteFiresBothStagesOnceAsync(azurite, new NodeV4App());

    [NodeV4Fact]
    public Task Node_v4_a_timer_trigger_fires_on_its_schedule() => SharedScenarios.TimerFiresAsync(azurite, new NodeV4App());
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
