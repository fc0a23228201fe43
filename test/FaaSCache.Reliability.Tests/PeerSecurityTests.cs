using FaaSCache.Peers.Protocol;
using Grpc.Core;
using Grpc.Net.Client;

namespace FaaSCache.Reliability.Tests;

/// <summary>
/// Security and generated bad peer messages against a real host process (one instance under <c>owner</c>): callers
/// without the app's peer key, peers of another app, replayed, forged and misdirected tokens are refused; puts with a wrong
/// length or checksum are refused and change nothing; shared-memory maps are 0600 with unguessable names; no secret appears
/// in the host's log, admin pages or the refusals; after all of it the host still serves.
/// </summary>
[Trait("Category", "Reliability")]
public sealed class PeerSecurityTests(AzuriteFixture azurite, ITestOutputHelper output) : AzuriteTests, IDisposable
{
    private const string GetVersionMethod = "/faascache.peer.CacheletPeer/GetVersion";
    private const string PutMethod = "/faascache.peer.CacheletPeer/Put";
    private readonly TestOutputWriter _log = new(output);

    [Fact]
    public async Task Refuses_strangers_other_apps_replays_forgeries_and_bad_puts_leaks_no_secret_and_keeps_serving()
    {
        await using ReliabilityRig rig = await ReliabilityRig.StartAsync(azurite.Server, "owner", 1, _log, CancellationToken.None);
        ClusterInstance host = rig.Cluster[0];
        var row = new ReliabilityRow("security");
        await ReliabilityRig.WriteAsync(host, "secret-doc", "v1", 4096, row, null, CancellationToken.None);
        Assert.Equal("v1", (await ReliabilityRig.ReadAsync(host, "secret-doc", row, null, CancellationToken.None)).Value);
        string key = $"{rig.Container.Name}/secret-doc";
        HostStatus status = await host.Host.GetStatusAsync();
        using GrpcChannel channel = GrpcChannel.ForAddress(status.PeerEndpoint!);
        var client = new CacheletPeer.CacheletPeerClient(channel);
        PeerKey own = PeerKey.FromConnectionString(azurite.ConnectionString, rig.Cluster.AppName);
        PeerKey otherApp = PeerKey.FromConnectionString(azurite.ConnectionString, rig.Cluster.AppName + "-other");
        var refusals = new List<string>();

        async Task<StatusCode> GetVersionAsync(string? token)
        {
            Metadata headers = token is null ? [] : new Metadata { { PeerWire.AuthHeader, token } };
            try
            {
                await client.GetVersionAsync(new VersionRequest { Key = key }, headers);
                return StatusCode.OK;
            }
            catch (RpcException e)
            {
                lock (refusals)
                {
                    refusals.Add(e.Status.Detail);
                }

                return e.StatusCode;
            }
        }

        Assert.Equal(StatusCode.Unauthenticated, await GetVersionAsync(null));
        Assert.Equal(StatusCode.PermissionDenied, await GetVersionAsync(otherApp.CreateToken(GetVersionMethod, DateTimeOffset.UtcNow)));
        Assert.Equal(StatusCode.PermissionDenied, await GetVersionAsync(own.CreateToken(PutMethod, DateTimeOffset.UtcNow)));
        Assert.Equal(StatusCode.PermissionDenied, await GetVersionAsync(own.CreateToken(GetVersionMethod, DateTimeOffset.UtcNow.AddHours(-1))));
        string valid = own.CreateToken(GetVersionMethod, DateTimeOffset.UtcNow);
        Assert.Equal(StatusCode.OK, await GetVersionAsync(valid));
        Assert.Equal(StatusCode.PermissionDenied, await GetVersionAsync(valid));

        // Forged tokens, generated: random text, and a valid token with one character changed.
        Gen.OneOf(
            Gen.String[0, 120],
            Gen.Select(Gen.Int[0, 200], Gen.Char['0', 'z']).Select((at, c) =>
            {
                char[] token = own.CreateToken(GetVersionMethod, DateTimeOffset.UtcNow).ToCharArray();
                int i = at % token.Length;
                token[i] = token[i] == c ? (char)(c + 1) : c;
                return new string(token);
            })).Sample(token =>
            {
                StatusCode code = GetVersionAsync(token).GetAwaiter().GetResult();
                Assert.True(code is StatusCode.Unauthenticated or StatusCode.PermissionDenied, $"{code} for the forged token '{token}'");
            }, iter: 100, threads: 1);

        // Bad puts with a valid token: a body shorter than its header says, then a checksum that does not match.
        Assert.NotEqual(StatusCode.OK, await PutAsync(client, own, key, declared: 100, body: new byte[50], checksum: 0));
        Assert.NotEqual(StatusCode.OK, await PutAsync(client, own, key, declared: 64, body: Encoding.ASCII.GetBytes(new string('x', 64)), checksum: 12345));
        Assert.NotEqual(StatusCode.OK, await PutAsync(client, own, key, declared: -1, body: [], checksum: 0));
        RegisterOp after = await ReliabilityRig.ReadAsync(host, "secret-doc", row, null, CancellationToken.None);
        Assert.Equal(("v1", true), (after.Value, after.Completed));
        Assert.Equal(("v1", true), await rig.StoredAsync("secret-doc", CancellationToken.None));

        // Maps: owner-only (0600), names that do not reveal or derive from the key.
        string[] maps = [.. Directory.EnumerateFiles(host.MapDirectory)];
        Assert.NotEmpty(maps);
        foreach (string map in maps)
        {
            Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(map));
            string name = Path.GetFileName(map);
            Assert.DoesNotContain("secret", name, StringComparison.OrdinalIgnoreCase);
            Assert.True(name.Length >= 16, $"the map name '{name}' is short enough to guess");
        }

        // No secret in the log, the admin pages or the refusals.
        string everything = string.Join(
            '\n',
            host.Host.Output,
            await host.Host.Http.GetStringAsync("admin/host/status"),
            await host.Host.Http.GetStringAsync("admin/invocations"),
            await host.Host.Http.GetStringAsync("metrics"),
            string.Join('\n', refusals));
        Assert.DoesNotContain(AzuriteServer.AccountKey, everything, StringComparison.Ordinal);
        Assert.DoesNotContain(AzuriteServer.AccountKey[..20], everything, StringComparison.Ordinal);
        Assert.DoesNotContain("AccountKey=", everything, StringComparison.OrdinalIgnoreCase);
        Assert.DoesNotContain(valid, everything, StringComparison.Ordinal);
        Assert.Contains("Refused peer call", host.Host.Output, StringComparison.Ordinal);

        await ReliabilityFaults.StillServesAsync(rig, [host], row, CancellationToken.None);
        await rig.FinishAsync(row, _log);
        Assert.Empty(ReliabilitySuite.Failures([row]));
    }

    public void Dispose() => _log.Dispose();

    private static async Task<StatusCode> PutAsync(CacheletPeer.CacheletPeerClient client, PeerKey key, string blobKey, long declared, byte[] body, ulong checksum)
    {
        using AsyncClientStreamingCall<PutRequest, PutReply> call = client.Put(new Metadata { { PeerWire.AuthHeader, key.CreateToken(PutMethod, DateTimeOffset.UtcNow) } });
        try
        {
            await call.RequestStream.WriteAsync(new PutRequest { Header = new PutHeader { Key = blobKey, Length = declared } });
            if (body.Length > 0)
            {
                await call.RequestStream.WriteAsync(new PutRequest { Chunk = ByteString.CopyFrom(body) });
            }

            await call.RequestStream.WriteAsync(new PutRequest { Trailer = new Trailer { Xxhash3 = checksum } });
            await call.RequestStream.CompleteAsync();
            await call.ResponseAsync;
            return StatusCode.OK;
        }
        catch (RpcException e)
        {
            return e.StatusCode;
        }
        catch (InvalidOperationException)
        {
            // The server ended the call while we were still writing: read its status.
            return call.GetStatus().StatusCode;
        }
    }
}
