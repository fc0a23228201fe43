using System.Globalization;
using System.Net;
using System.Text;
using Azure.Storage;
using Azure.Storage.Sas;
using FaaSCache.Host.BlobEndpoint;
using FaaSCache.Host.Tests.EndToEnd;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;

namespace FaaSCache.Host.Tests.Security;

/// <summary>
/// The SDK endpoint of a real host, attacked as issue 31's table did: a junk Shared Key on another account's path, a
/// SAS walking out of its container with '..', a create-only SAS over an existing blob, stale and undated Shared Key
/// requests; then every line the host logged and every admin page is searched for the key and the SAS signatures.
/// </summary>
[Trait("Category", "Security")]
public sealed class SdkEndpointAttackTests(AzuriteFixture azurite) : AzuriteTests
{
    private static readonly StorageRequestAuthenticator Signer = new(AzuriteServer.AccountName, AzuriteServer.AccountKey);
    private static readonly StorageSharedKeyCredential Credential = new(AzuriteServer.AccountName, AzuriteServer.AccountKey);
    private const string Version = "2025-11-05";

    [Fact]
    public async Task no_request_without_the_key_reads_writes_or_leaves_its_scope_and_no_secret_reaches_a_log_or_page()
    {
        string suffix = Guid.NewGuid().ToString("N")[..10];
        string shared = "shared-" + suffix, secret = "secret-" + suffix;
        BlobServiceClient direct = azurite.CreateServiceClient();
        await direct.GetBlobContainerClient(shared).CreateIfNotExistsAsync();
        await direct.GetBlobContainerClient(secret).CreateIfNotExistsAsync();
        await direct.GetBlobContainerClient(secret).GetBlobClient("x.txt").UploadAsync(BinaryData.FromString("top secret"));
        await direct.GetBlobContainerClient(shared).GetBlobClient("a.txt").UploadAsync(BinaryData.FromString("shared a"));
        using FunctionAppFolder app = SecurityApp.Build(shared);
        using var shm = new TempShmDirectory();
        await using FaaSCacheHostProcess host = await FaaSCacheHostProcess.StartAsync(app.Path, azurite.ConnectionString, shm.Path);
        await host.WaitForWorkersAsync();
        int sdk = SecurityApp.BannerPort(host.Output, "SDK endpoint");
        var sigs = new List<string>();

        async Task Expect(int status, string? code, string method, string target, (string, string)[] headers, byte[]? body = null)
        {
            SecurityApp.RawResponse response = await SecurityApp.SendRawAsync(sdk, method, target, headers, body);
            Assert.True(response.Status == status && (code is null || response.ErrorCode == code), $"{method} {target}: expected {status} {code}, got {response}");
        }

        (string, string)[] Junk(string method) => [("x-ms-date", DateTimeOffset.UtcNow.ToString("R", CultureInfo.InvariantCulture)), ("x-ms-version", Version), ("Authorization", "SharedKey x:y")];
        (string, string)[] Put = [("x-ms-blob-type", "BlockBlob")];

        // Row 1: a junk Shared Key, on another account's path or on the app's own.
        foreach (string account in new[] { "zzz", "DEVSTOREACCOUNT1", "devstoreaccount" })
        {
            await Expect(404, "ResourceNotFound", "GET", $"/{account}?comp=list", Junk("GET"));
            await Expect(404, "ResourceNotFound", "GET", $"/{account}/{secret}/x.txt", Junk("GET"));
            await Expect(404, "ResourceNotFound", "PUT", $"/{account}/{secret}/x.txt", [.. Junk("PUT"), .. Put], Encoding.UTF8.GetBytes("owned"));
            await Expect(404, "ResourceNotFound", "DELETE", $"/{account}/{secret}/x.txt", Junk("DELETE"));
        }

        string own = "/" + AzuriteServer.AccountName;
        await Expect(403, "AuthenticationFailed", "GET", $"{own}?comp=list", Junk("GET"));
        await Expect(403, "AuthenticationFailed", "GET", $"{own}/{secret}/x.txt", Junk("GET"));
        await Expect(403, "AuthenticationFailed", "PUT", $"{own}/{secret}/x.txt", [.. Junk("PUT"), .. Put], Encoding.UTF8.GetBytes("owned"));
        await Expect(403, "AuthenticationFailed", "DELETE", $"{own}/{secret}/x.txt", Junk("DELETE"));
        await Expect(403, "AuthenticationFailed", "PUT", $"{own}/{secret}/x.txt?comp=metadata", [.. Junk("PUT"), ("x-ms-meta-a", "b")]);

        // Row 2: a SAS for container 'shared' on a name that climbs out of it, raw or percent-encoded.
        string containerSas = new BlobSasBuilder(BlobContainerSasPermissions.All, DateTimeOffset.UtcNow.AddHours(1)) { BlobContainerName = shared }.ToSasQueryParameters(Credential).ToString();
        sigs.Add(SigOf(containerSas));
        (string, string)[] sasHeaders = [("x-ms-version", Version)];
        foreach (string name in new[] { $"../{secret}/x.txt", $"..%2F{secret}%2Fx.txt", $"%2E%2E/{secret}/x.txt", $"./../{secret}/x.txt", $"a//b", "a/.", $"%2e%2e%2f{secret}%2fx.txt" })
        {
            await Expect(400, "InvalidResourceName", "GET", $"{own}/{shared}/{name}?{containerSas}", sasHeaders);
            await Expect(400, "InvalidResourceName", "PUT", $"{own}/{shared}/{name}?{containerSas}", [.. sasHeaders, .. Put], Encoding.UTF8.GetBytes("owned"));
            await Expect(400, "InvalidResourceName", "DELETE", $"{own}/{shared}/{name}?{containerSas}", sasHeaders);
        }

        await Expect(403, "AuthenticationFailed", "GET", $"{own}/{secret}/x.txt?{containerSas}", sasHeaders);
        await Expect(200, null, "GET", $"{own}/{shared}/a.txt?{containerSas}", sasHeaders);

        // Row 3: a SAS that may only create does not replace an existing blob, and creates a new one once.
        string createOnly = new BlobSasBuilder(BlobContainerSasPermissions.Create, DateTimeOffset.UtcNow.AddHours(1)) { BlobContainerName = shared }.ToSasQueryParameters(Credential).ToString();
        sigs.Add(SigOf(createOnly));
        await Expect(403, "AuthorizationPermissionMismatch", "PUT", $"{own}/{shared}/a.txt?{createOnly}", [.. sasHeaders, .. Put], Encoding.UTF8.GetBytes("replaced"));
        await Expect(201, null, "PUT", $"{own}/{shared}/new.txt?{createOnly}", [.. sasHeaders, .. Put], Encoding.UTF8.GetBytes("new"));
        await Expect(403, "AuthorizationPermissionMismatch", "PUT", $"{own}/{shared}/new.txt?{createOnly}", [.. sasHeaders, .. Put], Encoding.UTF8.GetBytes("again"));
        await Expect(403, "AuthorizationPermissionMismatch", "PUT", $"{own}/{shared}/blk.txt?comp=block&blockid=AAAA&{createOnly}", sasHeaders, Encoding.UTF8.GetBytes("block"));

        // Row 4: requests the endpoint forwards with a SAS (a listing, metadata) and serves (a read).
        string listSas = new BlobSasBuilder(BlobContainerSasPermissions.List | BlobContainerSasPermissions.Read, DateTimeOffset.UtcNow.AddHours(1)) { BlobContainerName = shared }.ToSasQueryParameters(Credential).ToString();
        sigs.Add(SigOf(listSas));
        await Expect(200, null, "GET", $"{own}/{shared}?restype=container&comp=list&{listSas}", sasHeaders);
        await Expect(200, null, "HEAD", $"{own}/{shared}/a.txt?comp=metadata&{listSas}", sasHeaders);
        await Expect(200, null, "GET", $"{own}/{shared}/a.txt?{listSas}", sasHeaders);

        // Row 8: a correctly signed Shared Key request outside storage's 15-minute window, or without a date.
        foreach ((string? date, int status) in new (string?, int)[] { (DateTimeOffset.UtcNow.AddDays(-3).ToString("R", CultureInfo.InvariantCulture), 403), (DateTimeOffset.UtcNow.AddYears(1).ToString("R", CultureInfo.InvariantCulture), 403), (null, 403), (DateTimeOffset.UtcNow.ToString("R", CultureInfo.InvariantCulture), 200) })
        {
            (string, string)[] signed = SharedKey("GET", $"{own}/{secret}/x.txt", date is null ? [("x-ms-version", Version)] : [("x-ms-date", date), ("x-ms-version", Version)]);
            await Expect(status, status == 403 ? "AuthenticationFailed" : null, "GET", $"{own}/{secret}/x.txt", signed);
        }

        // Nothing was read out, written or deleted: storage holds what it held.
        Assert.Equal("top secret", (await direct.GetBlobContainerClient(secret).GetBlobClient("x.txt").DownloadContentAsync()).Value.Content.ToString());
        Assert.Equal("shared a", (await direct.GetBlobContainerClient(shared).GetBlobClient("a.txt").DownloadContentAsync()).Value.Content.ToString());
        Assert.Equal("new", (await direct.GetBlobContainerClient(shared).GetBlobClient("new.txt").DownloadContentAsync()).Value.Content.ToString());
        Assert.Empty((await direct.GetBlobContainerClient(secret).GetBlobClient("x.txt").GetPropertiesAsync()).Value.Metadata);

        // No secret in any log line or admin page.
        var pages = new StringBuilder(host.Output);
        foreach (string page in new[] { "admin/host/status", "admin/invocations", "admin/sdk-endpoint/requests", "metrics" })
        {
            pages.AppendLine(await host.Http.GetStringAsync(page));
        }

        string text = pages.ToString();
        Assert.Contains("SDK endpoint", text, StringComparison.Ordinal);
        Assert.DoesNotContain(AzuriteServer.AccountKey, text, StringComparison.Ordinal);
        Assert.DoesNotContain(Uri.EscapeDataString(AzuriteServer.AccountKey), text, StringComparison.OrdinalIgnoreCase);
        foreach (string sig in sigs)
        {
            Assert.DoesNotContain(sig, text, StringComparison.Ordinal);
            Assert.DoesNotContain(Uri.EscapeDataString(sig), text, StringComparison.OrdinalIgnoreCase);
        }

        Assert.DoesNotMatch(@"sig=(?!REDACTED)[^&\s""']", text);
        // host.json's logging.logLevel.default Debug lets the reverse proxy log each forwarded URL: redacted, not absent.
        Assert.Matches(@"Proxying to http://\S+sig=REDACTED", text);
    }

    private static string SigOf(string sasQuery) =>
        Uri.UnescapeDataString(sasQuery.Split('&').First(p => p.StartsWith("sig=", StringComparison.Ordinal))["sig=".Length..]);

    // Signs as the SDKs do, with the endpoint's own string-to-sign (verified against the SDK in StorageRequestAuthenticatorTests).
    private static (string, string)[] SharedKey(string method, string target, (string Name, string Value)[] headers)
    {
        var context = new DefaultHttpContext();
        context.Request.Method = method;
        context.Features.Get<IHttpRequestFeature>()!.RawTarget = target;
        foreach ((string name, string value) in headers)
        {
            context.Request.Headers[name] = value;
        }

        string signature = Signer.Sign(Signer.StringToSignForSharedKey(context.Request));
        return [.. headers, ("Authorization", $"SharedKey {AzuriteServer.AccountName}:{signature}")];
    }
}
