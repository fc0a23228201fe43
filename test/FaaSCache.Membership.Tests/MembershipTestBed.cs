namespace FaaSCache.Membership.Tests;

/// <summary>
/// One app's membership in a fresh (not yet created) container of the shared Azurite; builds stores and daemons
/// that each have their own <see cref="BlobContainerClient"/>, as separate instances would. Disposing crashes
/// (disposes without leaving) whatever daemons are still running.
/// </summary>
internal sealed class MembershipTestBed(AzuriteFixture azurite, ITestOutputHelper output, string app = "orders-app") : IAsyncDisposable
{
    private readonly List<MembershipDaemon> _daemons = [];

    public string App { get; } = app;

    public string ContainerName { get; } = AzuriteServer.NewContainerName("membership");

    public string ConnectionString => azurite.ConnectionString;

    public BlobContainerClient NewContainerClient() => new(azurite.ConnectionString, ContainerName, MembershipStore.CreateClientOptions());

    public BlobClient Blob => NewContainerClient().GetBlobClient(MembershipStore.BlobNameFor(App));

    public MembershipStore NewStore(MembershipStoreOptions? options = null) => new(NewContainerClient(), App, options);

    public static Uri EndpointOf(string id) => new($"http://{id}.peers.test:7070/");

    public MembershipDaemon NewDaemon(
        string id,
        TimeSpan heartbeatInterval,
        TimeSpan failureTimeout,
        TimeSpan? watchInterval = null,
        Uri? endpoint = null)
    {
        var daemon = new MembershipDaemon(
            NewStore(),
            new MemberIdentity(App, id, endpoint ?? EndpointOf(id)) { Metadata = new Dictionary<string, string> { ["test"] = "membership" } },
            new FaaSCache.Options.MembershipOptions
            {
                HeartbeatInterval = heartbeatInterval,
                FailureTimeout = failureTimeout,
                WatchInterval = watchInterval ?? TimeSpan.Zero,
            },
            logger: new TestLogger<MembershipDaemon>(output, id));
        lock (_daemons)
        {
            _daemons.Add(daemon);
        }

        return daemon;
    }

    public async Task<MembershipList> ReadListAsync() => (await NewStore().ReadAsync()).List;

    /// <summary>How long a test waits for the daemons to see a change (a join, a crash, a rejoin) before it fails.</summary>
    public static readonly TimeSpan Patience = TimeSpan.FromSeconds(20);

    /// <summary>Polls <paramref name="condition"/> every 50 ms; fails with <paramref name="what"/> after <see cref="Patience"/>; returns how long it took.</summary>
    public static async Task<TimeSpan> WaitUntilAsync(Func<Task<bool>> condition, string what)
    {
        var clock = Stopwatch.StartNew();
        while (!await condition())
        {
            if (clock.Elapsed > Patience)
            {
                throw new TimeoutException($"Waited {Patience.TotalSeconds:0.0} s for {what}.");
            }

            await Task.Delay(50);
        }

        return clock.Elapsed;
    }

    public static Task<TimeSpan> WaitUntilAsync(Func<bool> condition, string what)
        => WaitUntilAsync(() => Task.FromResult(condition()), what);

    public async ValueTask DisposeAsync()
    {
        MembershipDaemon[] all;
        lock (_daemons)
        {
            all = [.. _daemons];
        }

        await Task.WhenAll(all.Select(d => d.DisposeAsync().AsTask()));
    }
}
