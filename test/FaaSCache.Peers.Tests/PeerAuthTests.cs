using Grpc.Net.Client;

namespace FaaSCache.Peers.Tests;

/// <summary>Peers of one app authenticate each other with a key derived from the app's storage secret.</summary>
[Trait("Category", "Integration")]
public sealed class PeerAuthTests(AzuriteFixture azurite) : AzuriteTests
{
    private const string VersionMethod = "/faascache.peer.CacheletPeer/GetVersion";

    [Fact]
    public async Task A_peer_with_another_apps_key_is_refused_and_the_cache_is_untouched()
    {
        await using var cluster = await PeerCluster.StartAsync(azurite);
        string key = cluster.KeyOwnedBy("b");
        await cluster.UploadAsync(key, PeerCluster.RandomBytes(10_000));
        GrpcPeerClient stranger = cluster.NewClient(PeerKey.FromConnectionString(azurite.ConnectionString, "another-app"));

        PeerUnavailableException get = await Assert.ThrowsAsync<PeerUnavailableException>(() => stranger.GetAsync("b", key, true, GrpcPeerTests.ReadAllAsync));
        Assert.Contains("refused", get.Message, StringComparison.Ordinal);
        string otherKey = cluster.KeyOwnedBy("b", prefix: "put");
        PeerUnavailableException put = await Assert.ThrowsAsync<PeerUnavailableException>(() => stranger.PutAsync("b", otherKey, new MemoryStream(new byte[3_000_000]), 3_000_000));
        Assert.Contains("refused", put.Message, StringComparison.Ordinal);
        Assert.Contains("refused", (await Assert.ThrowsAsync<PeerUnavailableException>(() => stranger.GetVersionAsync("b", key))).Message, StringComparison.Ordinal);
        Assert.Contains("refused", (await Assert.ThrowsAsync<PeerUnavailableException>(() => stranger.InvalidateAsync("b", key, "\"x\""))).Message, StringComparison.Ordinal);
        // Function results (result caching, location cluster) are behind the same key.
        Assert.Contains("refused", (await Assert.ThrowsAsync<PeerUnavailableException>(() => stranger.GetResultAsync("b", "F/00", CancellationToken.None))).Message, StringComparison.Ordinal);
        Assert.Contains("refused", (await Assert.ThrowsAsync<PeerUnavailableException>(() => stranger.PutResultAsync("b", "F/00", [1], TimeSpan.FromMinutes(1), CancellationToken.None))).Message, StringComparison.Ordinal);

        Assert.Equal(0, cluster["b"].Count);
        Assert.Empty(cluster.MapFiles("b"));
        Assert.Equal(0, cluster["b"].Metrics.Snapshot().PeerServed);
        Assert.Null(await cluster.DownloadAsync(otherKey));

        // The app's own peers still get through.
        Assert.NotNull(await cluster.Client("a").GetAsync("b", key, true, GrpcPeerTests.ReadAllAsync));
    }

    [Fact]
    public async Task A_caller_without_a_token_is_unauthenticated()
    {
        await using var cluster = await PeerCluster.StartAsync(azurite);
        using GrpcChannel channel = GrpcChannel.ForAddress(cluster.Server("b").Endpoint);
        var raw = new CacheletPeer.CacheletPeerClient(channel);

        RpcException e = await Assert.ThrowsAsync<RpcException>(async () => await raw.GetVersionAsync(new VersionRequest { Key = cluster.KeyOwnedBy("b") }));

        Assert.Equal(StatusCode.Unauthenticated, e.StatusCode);
        Assert.Contains("refused", e.Status.Detail, StringComparison.Ordinal);
        RpcException get = await Assert.ThrowsAsync<RpcException>(async () => await raw.GetResultAsync(new ResultRequest { Key = "F/00" }));
        RpcException put = await Assert.ThrowsAsync<RpcException>(async () => await raw.PutResultAsync(new PutResultRequest { Key = "F/00", TtlMs = 60_000 }));
        Assert.Equal((StatusCode.Unauthenticated, StatusCode.Unauthenticated), (get.StatusCode, put.StatusCode));
    }

    [Fact]
    public async Task A_replayed_or_repurposed_token_is_refused()
    {
        await using var cluster = await PeerCluster.StartAsync(azurite);
        using GrpcChannel channel = GrpcChannel.ForAddress(cluster.Server("b").Endpoint);
        var raw = new CacheletPeer.CacheletPeerClient(channel);
        string key = cluster.KeyOwnedBy("b");
        var token = new Metadata { { PeerWire.AuthHeader, cluster.Key.CreateToken(VersionMethod, DateTimeOffset.UtcNow) } };

        await raw.GetVersionAsync(new VersionRequest { Key = key }, token);
        RpcException replay = await Assert.ThrowsAsync<RpcException>(async () => await raw.GetVersionAsync(new VersionRequest { Key = key }, token));
        Assert.Equal(StatusCode.PermissionDenied, replay.StatusCode);
        Assert.Contains("replay", replay.Status.Detail, StringComparison.Ordinal);

        var forVersion = new Metadata { { PeerWire.AuthHeader, cluster.Key.CreateToken(VersionMethod, DateTimeOffset.UtcNow) } };
        RpcException repurposed = await Assert.ThrowsAsync<RpcException>(async () => await raw.InvalidateAsync(new InvalidateRequest { Key = key, Version = "\"x\"" }, forVersion));
        Assert.Equal(StatusCode.PermissionDenied, repurposed.StatusCode);

        var stale = new Metadata { { PeerWire.AuthHeader, cluster.Key.CreateToken(VersionMethod, DateTimeOffset.UtcNow.AddMinutes(-10)) } };
        RpcException expired = await Assert.ThrowsAsync<RpcException>(async () => await raw.GetVersionAsync(new VersionRequest { Key = key }, stale));
        Assert.Equal(StatusCode.PermissionDenied, expired.StatusCode);
    }

    [Fact]
    public void The_key_depends_on_the_secret_and_the_app_and_not_on_the_connection_strings_other_parts()
    {
        const string secret = "c2VjcmV0LWtleS1vZi10aGUtYWNjb3VudA==";
        PeerKey a = PeerKey.Derive(secret, "app-one");

        Assert.Equal(a.Fingerprint, PeerKey.Derive(secret, "APP-ONE").Fingerprint);
        Assert.Equal(a.Fingerprint, PeerKey.FromConnectionString($"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={secret};EndpointSuffix=core.windows.net", "app-one").Fingerprint);
        Assert.NotEqual(a.Fingerprint, PeerKey.Derive(secret, "app-two").Fingerprint);
        Assert.NotEqual(a.Fingerprint, PeerKey.Derive(secret + "x", "app-one").Fingerprint);
        Assert.Equal(PeerKey.Derive(PeerKey.DevelopmentStorageAccountKey, "app-one").Fingerprint, PeerKey.FromConnectionString("UseDevelopmentStorage=true", "app-one").Fingerprint);
        Assert.Throws<ArgumentException>(() => PeerKey.FromConnectionString("BlobEndpoint=https://acct.blob.core.windows.net/", "app-one"));
        Assert.DoesNotContain(secret, a.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public void A_token_never_carries_the_key_and_checks_only_with_the_same_key_method_and_time()
    {
        PeerKey key = PeerKey.Derive("secret", "app");
        DateTimeOffset now = DateTimeOffset.UtcNow;
        string token = key.CreateToken(VersionMethod, now);
        TimeSpan skew = TimeSpan.FromMinutes(2);

        Assert.Equal(PeerTokenCheck.Valid, key.Verify(token, VersionMethod, now.AddSeconds(30), skew, out UInt128 nonce, out _));
        Assert.NotEqual(UInt128.Zero, nonce);
        Assert.Equal(PeerTokenCheck.WrongKey, PeerKey.Derive("secret", "other").Verify(token, VersionMethod, now, skew, out _, out _));
        Assert.Equal(PeerTokenCheck.WrongKey, key.Verify(token, "/faascache.peer.CacheletPeer/Put", now, skew, out _, out _));
        Assert.Equal(PeerTokenCheck.Expired, key.Verify(token, VersionMethod, now.AddMinutes(3), skew, out _, out _));
        Assert.Equal(PeerTokenCheck.Missing, key.Verify(null, VersionMethod, now, skew, out _, out _));
        Assert.Equal(PeerTokenCheck.Malformed, key.Verify("v1.x.y.z", VersionMethod, now, skew, out _, out _));
        Assert.Equal(PeerTokenCheck.WrongKey, key.Verify(token[..^2] + (token[^2] == 'A' ? "B" : "A") + token[^1], VersionMethod, now, skew, out _, out _));
        Assert.NotEqual(token, key.CreateToken(VersionMethod, now));
    }
}
