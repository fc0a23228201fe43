using Azure;
using Azure.Core;
using Azure.Core.Pipeline;

namespace FaaSCache.Membership.Tests;

/// <summary>
/// The daemon's blob client makes one attempt per request: its loop retries within a heartbeat interval, whereas the
/// SDK's default back-off (1.6 + 3.2 + 6.4 s) kept heartbeats asleep, and leases lost, for seconds after a restarted
/// storage answered again (the reliability suite's storage restart).
/// </summary>
[Trait("Category", "Integration")]
public sealed class MembershipDaemonClientTests
{
    [Fact]
    public async Task A_daemon_store_against_stopped_storage_fails_after_one_attempt_and_reads_again_once_storage_is_back()
    {
        await using AzuriteServer azurite = await AzuriteServer.StartAsync();
        var attempts = new CountingPolicy();
        var options = MembershipStore.CreateDaemonClientOptions(TimeSpan.FromSeconds(3));
        options.AddPolicy(attempts, HttpPipelinePosition.PerRetry);
        Assert.Equal(0, options.Retry.MaxRetries);
        MembershipStore store = MembershipStore.Create(azurite.ConnectionString, "restart-app", clientOptions: options);
        await store.UpdateAsync(list => list.WithMember(new MemberInfo("m1", new Uri("http://127.0.0.1:1/"), DateTimeOffset.UnixEpoch, DateTimeOffset.UnixEpoch)));

        await azurite.StopAsync();
        int before = attempts.Count;
        // Membership goes through IBlobStore: the store names the failure, the client's answer is its cause.
        var failure = await Assert.ThrowsAsync<StorageUnavailableException>(() => store.ReadAsync());
        Assert.IsType<RequestFailedException>(failure.InnerException);
        Assert.Equal(1, attempts.Count - before);

        await azurite.StartAgainAsync();
        Assert.Equal(["m1"], (await store.ReadAsync()).List.Ids);
    }

    private sealed class CountingPolicy : HttpPipelineSynchronousPolicy
    {
        private int _count;

        public int Count => Volatile.Read(ref _count);

        public override void OnSendingRequest(HttpMessage message) => Interlocked.Increment(ref _count);
    }
}
