namespace FaaSCache.Host.Tests.EndToEnd;

/// <summary>
/// The same blob-binding and pipeline scenarios as <see cref="PythonHostEndToEndTests"/>, with the Node.js worker
/// running a function.json-model JavaScript app. Skipped only when the Node worker's node_modules is missing.
/// </summary>
[Trait("Category", "Integration")]
public sealed class NodeHostEndToEndTests(AzuriteFixture azurite) : AzuriteTests
{
    [NodeWorkerFact]
    public Task A_50_MB_blob_input_is_a_local_miss_first_then_a_local_hit_on_the_same_map_with_nothing_copied_and_the_output_lands_in_storage() =>
        SharedScenarios.LocalMissThenZeroCopyLocalHitAsync(azurite, new NodeApp());

    [NodeWorkerFact]
    public Task A_cache_write_fires_both_downstream_stages_of_the_pipeline_at_once_and_each_fires_once() =>
        SharedScenarios.CacheWriteFiresBothStagesOnceAsync(azurite, new NodeApp());
}
