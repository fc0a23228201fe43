namespace FaaSCache.Reliability.Tests;

/// <summary>
/// The reliability benchmark's fault scenarios in its quick mode, each with real host processes: after the fault no
/// acknowledged write under a sync preset is lost, no read is partial, no map or process is left, the survivors serve.
/// </summary>
[Trait("Category", "Reliability")]
public sealed class FaultScenarioTests(AzuriteFixture azurite, ITestOutputHelper output) : AzuriteTests, IDisposable
{
    private readonly TestOutputWriter _log = new(output);

    [Fact]
    public async Task A_read_whose_owner_is_killed_mid_transfer_returns_the_whole_object_from_storage()
    {
        ReliabilityRow row = await ReliabilityFaults.OwnerKilledMidTransferAsync(azurite.Server, ReliabilitySuite.Quick.TransferMegabytes, _log, CancellationToken.None);
        AssertClean(row);
    }

    [Fact]
    public async Task Writes_acknowledged_under_owner_are_in_storage_after_the_owner_is_killed()
    {
        ReliabilityRow row = await ReliabilityFaults.OwnerKilledAfterAckAsync(azurite.Server, 5, _log, CancellationToken.None);
        AssertClean(row);
        Assert.Equal(0, row.StaleReads);
    }

    [Fact]
    public async Task Killing_the_owner_during_async_write_back_loses_only_the_pending_writes_and_the_others_still_serve()
    {
        ReliabilityRow row = await ReliabilityFaults.OwnerKilledDuringWriteBackAsync(azurite.Server, 3, _log, CancellationToken.None);
        Assert.Empty(ReliabilitySuite.Failures([row]));
        Assert.Equal(1, row.WritesLost);
    }

    [Fact]
    public async Task A_worker_killed_mid_invocation_fails_that_invocation_only_and_is_restarted()
    {
        ReliabilityRow row = await ReliabilityFaults.WorkerKilledMidInvocationAsync(azurite.Server, _log, CancellationToken.None);
        AssertClean(row);
        Assert.Equal(1, row.Errors);
    }

    [Fact]
    public async Task Under_owner_a_storage_freeze_under_load_loses_no_acknowledged_write_and_serves_no_stale_read()
    {
        ReliabilityRow row = await ReliabilityFaults.StorageFrozenUnderLoadAsync(azurite.Server, TimeSpan.FromSeconds(15), _log, CancellationToken.None);
        AssertClean(row);
    }

    [Theory]
    [InlineData("owner")]
    [InlineData("strong")]
    public async Task Restarting_storage_under_load_acknowledges_no_write_it_lacks_loses_none_and_the_hosts_serve_after_it(string preset)
    {
        ReliabilityRow row = await ReliabilityStorageRestart.RunAsync(
            azurite.Server, preset, ReliabilitySuite.StorageRestartLoad, ReliabilitySuite.StorageRestartDowntime, _log, CancellationToken.None);
        AssertClean(row);
        Assert.True(azurite.Server.IsRunning);

        // The outage happened: writes during it failed (with the host's error, not an acknowledgement).
        Assert.True(row.Errors > 0, "no operation failed while storage was down");
    }

    [Fact]
    public async Task A_partitioned_owner_that_heals_and_a_slow_or_lossy_peer_link_keep_owner_linearizable()
    {
        IReadOnlyList<ReliabilityRow> rows = await ReliabilityNetworkFaults.RunAsync(ReliabilitySuite.Quick.NetworkOpsPerPhase, _log, CancellationToken.None);
        foreach (ReliabilityRow row in rows)
        {
            AssertClean(row);
            Assert.Equal(1, row.Runs);
        }
    }

    public void Dispose() => _log.Dispose();

    private void AssertClean(ReliabilityRow row)
    {
        foreach (string note in row.Notes)
        {
            output.WriteLine(note);
        }

        output.WriteLine(row.ToCsv());
        Assert.Empty(ReliabilitySuite.Failures([row]));
    }
}
