using Azure.Storage.Sas;
using FaaSCache.Host.BlobEndpoint;
using Microsoft.AspNetCore.Http;

namespace FaaSCache.Host.Tests.BlobEndpoint;

// Inside the namespace: at the top, the namespace FaaSCache.Options would hide SignedRequests.Options.
using static SignedRequests;

/// <summary>
/// Service and account SAS (SasVerifier behind the authenticator): the reference's worked examples, the time frame,
/// permissions, protocol, IP range and services a SAS grants, malformed SAS, the SAS left to storage, and SAS made by
/// the real SDK's builders.
/// </summary>
[Trait("Category", "Unit")]
public sealed class StorageRequestAuthenticatorSasTests
{
    // ---- The reference's worked examples -------------------------------------------------------------------

    [Fact]
    public void The_reference_service_sas_example_is_verified_before_its_expiry()
    {
        var authenticator = new StorageRequestAuthenticator(Account, Key, BeforeExampleExpiry);
        HttpRequest request = NewRequest("GET", $"/devstoreaccount1/mycontainer/hello.txt?{ExampleServiceSasQuery}");

        Assert.Equal(AuthOutcome.Verified, authenticator.Authenticate(request, BlobOperation.Read, "mycontainer", "hello.txt"));
    }

    [Fact]
    public void The_reference_account_sas_example_is_verified_for_reads_writes_and_deletes()
    {
        var authenticator = new StorageRequestAuthenticator(Account, Key, BeforeExampleExpiry);

        foreach ((string method, BlobOperation operation) in new[] { ("GET", BlobOperation.Read), ("PUT", BlobOperation.Write), ("DELETE", BlobOperation.Delete) })
        {
            HttpRequest request = NewRequest(method, $"/devstoreaccount1/mycontainer/hello.txt?{ExampleAccountSasQuery}");
            Assert.Equal(AuthOutcome.Verified, authenticator.Authenticate(request, operation, "mycontainer", "hello.txt"));
        }
    }

    [Fact]
    public void Sign_of_the_reference_sas_strings_to_sign_gives_their_signatures()
    {
        string service = string.Join('\n', "r", "", "2026-11-22T00:00:00Z", "/blob/devstoreaccount1/mycontainer/hello.txt", "", "", "https,http", "2026-10-06", "b", "", "", "", "", "", "", "");
        string account = string.Join('\n', Account, "rwdlac", "b", "sco", "", "2026-11-22T00:00:00Z", "", "https,http", "2026-10-06", "") + "\n";

        Assert.Equal("LfKOh+urOl9vTECWLCc4jzMAq9fGgUD5YlTASakNiA4=", Authenticator.Sign(service));
        Assert.Equal("ZbYIewu0VnTeIuKdWWsvYe5r9Lw6Mjt/+bhFq/GvBDY=", Authenticator.Sign(account));
    }

    // ---- Refusals ------------------------------------------------------------------------------------------

    [Fact]
    public void The_reference_service_sas_is_refused_as_expired_after_its_expiry()
    {
        var authenticator = new StorageRequestAuthenticator(Account, Key, AfterExampleExpiry);
        HttpRequest request = NewRequest("GET", $"/devstoreaccount1/mycontainer/hello.txt?{ExampleServiceSasQuery}");

        AuthOutcome outcome = authenticator.Authenticate(request, BlobOperation.Read, "mycontainer", "hello.txt");

        Assert.Equal(AuthDecision.Refused, outcome.Decision);
        Assert.Equal("AuthenticationFailed", outcome.ErrorCode);
        Assert.Contains("expired at 2026-11-22T00:00:00Z (se)", outcome.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_sas_that_starts_later_is_refused_as_not_yet_valid()
    {
        DateTimeOffset now = DateTimeOffset.UtcNow;
        Uri sas = SasUri(new BlobSasBuilder(BlobSasPermissions.Read, now.AddHours(2)) { BlobContainerName = "c", BlobName = "b.txt", StartsOn = now.AddHours(1) });

        AuthOutcome outcome = Authenticator.Authenticate(NewRequest("GET", sas.PathAndQuery), BlobOperation.Read, "c", "b.txt");

        Assert.Equal("AuthenticationFailed", outcome.ErrorCode);
        Assert.Contains("not yet valid", outcome.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void The_reference_service_sas_is_refused_for_another_blob()
    {
        var authenticator = new StorageRequestAuthenticator(Account, Key, BeforeExampleExpiry);
        HttpRequest request = NewRequest("GET", $"/devstoreaccount1/mycontainer/other.txt?{ExampleServiceSasQuery}");

        AuthOutcome outcome = authenticator.Authenticate(request, BlobOperation.Read, "mycontainer", "other.txt");

        Assert.Equal("AuthenticationFailed", outcome.ErrorCode);
        Assert.Contains("/blob/devstoreaccount1/mycontainer/other.txt", outcome.Detail, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(BlobOperation.Create, "Put Blob needs w, or c for a blob that does not exist yet")]
    [InlineData(BlobOperation.Write, "Put Block and Put Block List need w")]
    [InlineData(BlobOperation.Delete, "deleting a blob needs d")]
    public void A_read_only_sas_is_refused_for_writes_and_deletes(BlobOperation operation, string named)
    {
        var authenticator = new StorageRequestAuthenticator(Account, Key, BeforeExampleExpiry);
        HttpRequest request = NewRequest(operation == BlobOperation.Delete ? "DELETE" : "PUT", $"/devstoreaccount1/mycontainer/hello.txt?{ExampleServiceSasQuery}");

        AuthOutcome outcome = authenticator.Authenticate(request, operation, "mycontainer", "hello.txt");

        Assert.Equal(AuthDecision.Refused, outcome.Decision);
        Assert.Equal("AuthorizationPermissionMismatch", outcome.ErrorCode);
        Assert.Contains(named, outcome.Message, StringComparison.Ordinal);
        Assert.Contains("sp=r", outcome.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_create_only_sas_lets_put_blob_create_only_and_refuses_put_block()
    {
        Uri sas = SasUri(new BlobSasBuilder(BlobSasPermissions.Create, DateTimeOffset.UtcNow.AddHours(1)) { BlobContainerName = "c", BlobName = "b.txt" });

        AuthOutcome putBlob = Authenticator.Authenticate(NewRequest("PUT", sas.PathAndQuery), BlobOperation.Create, "c", "b.txt");
        AuthOutcome putBlock = Authenticator.Authenticate(NewRequest("PUT", sas.PathAndQuery), BlobOperation.Write, "c", "b.txt");

        Assert.Equal(AuthOutcome.VerifiedCreateOnly, putBlob);
        Assert.Equal("AuthorizationPermissionMismatch", putBlock.ErrorCode);
    }

    [Fact]
    public void An_https_only_sas_is_refused_over_http()
    {
        Uri sas = SasUri(new BlobSasBuilder(BlobSasPermissions.Read, DateTimeOffset.UtcNow.AddHours(1)) { BlobContainerName = "c", BlobName = "b.txt", Protocol = SasProtocol.Https });

        AuthOutcome outcome = Authenticator.Authenticate(NewRequest("GET", sas.PathAndQuery), BlobOperation.Read, "c", "b.txt");

        Assert.Equal("AuthorizationProtocolMismatch", outcome.ErrorCode);
        Assert.Contains("spr=https", outcome.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("10.0.0.1", "10.0.0.9", AuthDecision.Refused)]
    [InlineData("127.0.0.0", "127.0.0.255", AuthDecision.Verified)]
    public void A_sas_with_an_ip_range_admits_only_callers_in_it(string low, string high, AuthDecision expected)
    {
        Uri sas = SasUri(new BlobSasBuilder(BlobSasPermissions.Read, DateTimeOffset.UtcNow.AddHours(1))
        {
            BlobContainerName = "c",
            BlobName = "b.txt",
            IPRange = new SasIPRange(IPAddress.Parse(low), IPAddress.Parse(high)),
        });

        AuthOutcome outcome = Authenticator.Authenticate(NewRequest("GET", sas.PathAndQuery), BlobOperation.Read, "c", "b.txt");

        Assert.Equal(expected, outcome.Decision);
        if (expected == AuthDecision.Refused)
        {
            Assert.Equal("AuthorizationSourceIPMismatch", outcome.ErrorCode);
        }
    }

    [Theory]
    [InlineData(AccountSasServices.Files, AccountSasResourceTypes.Object, "AuthorizationServiceMismatch")]
    [InlineData(AccountSasServices.Blobs, AccountSasResourceTypes.Container, "AuthorizationResourceTypeMismatch")]
    public void An_account_sas_needs_the_blob_service_and_object_resources(AccountSasServices services, AccountSasResourceTypes resourceTypes, string errorCode)
    {
        var builder = new AccountSasBuilder(AccountSasPermissions.All, DateTimeOffset.UtcNow.AddHours(1), services, resourceTypes);
        string query = builder.ToSasQueryParameters(Credential).ToString();

        AuthOutcome outcome = Authenticator.Authenticate(NewRequest("GET", $"/{Account}/c/b.txt?{query}"), BlobOperation.Read, "c", "b.txt");

        Assert.Equal(errorCode, outcome.ErrorCode);
    }

    [Theory]
    [InlineData("sv=2026-10-06&sr=b&sp=r&se=never&sig=AAAA")]
    [InlineData("sv=yesterday&sr=b&sp=r&sig=AAAA")]
    [InlineData("sv=2026-10-06&sp=r&se=2026-11-22&sig=AAAA")]
    [InlineData("sv=2026-10-06&sr=b&sp=r&se=2026-11-22&sig=%%%ZZ%")]
    [InlineData("sig=")]
    public void A_malformed_sas_is_refused_without_an_exception(string query)
    {
        AuthOutcome outcome = Authenticator.Authenticate(NewRequest("GET", $"/{Account}/c/b.txt?{query}"), BlobOperation.Read, "c", "b.txt");

        Assert.Equal(AuthDecision.Refused, outcome.Decision);
        Assert.Equal("AuthenticationFailed", outcome.ErrorCode);
    }

    [Theory]
    [InlineData("sv=2026-10-06&sr=b&sp=&se=2026-11-22T00%3A00%3A00Z&sig=AAAA", "sp")]
    [InlineData("sv=2026-10-06&sr=c&se=2026-11-22T00%3A00%3A00Z&sig=AAAA", "sp")]
    [InlineData("sv=2026-10-06&ss=b&srt=o&sp=&se=2026-11-22T00%3A00%3A00Z&sig=AAAA", "sp")]
    [InlineData("sv=2026-10-06&ss=b&sp=r&se=2026-11-22T00%3A00%3A00Z&sig=AAAA", "srt")]
    public void A_sas_without_a_mandatory_field_is_refused_as_azure_refuses_it_not_as_a_permission_mismatch(string query, string field)
    {
        // The SDK will not sign an empty sp; signed by hand, it must still not read as "no permission" (the differential test found it).
        AuthOutcome outcome = AtExampleTime.Authenticate(NewRequest("GET", $"/{Account}/c/b.txt?{query}"), BlobOperation.Read, "c", "b.txt");

        Assert.Equal(AuthDecision.Refused, outcome.Decision);
        Assert.Equal("AuthenticationFailed", outcome.ErrorCode);
        Assert.Equal($"{field} is mandatory. Cannot be empty", outcome.Detail);
    }

    // ---- Forwarded ------------------------------------------------------------------------------------------

    [Theory]
    [InlineData("sv=2026-10-06&sr=b&sp=r&se=2026-11-22T00%3A00%3A00Z&skoid=00000000-0000-0000-0000-000000000000&sktid=t&skt=x&ske=y&sks=b&skv=2026-10-06&sig=AAAA")]
    [InlineData("sv=2019-12-12&sr=b&sp=r&se=2026-11-22T00%3A00%3A00Z&sig=AAAA")]
    [InlineData("sv=2026-10-06&sr=b&si=policy1&sig=AAAA")]
    public void A_user_delegation_old_or_stored_policy_sas_is_forwarded(string query)
    {
        HttpRequest request = NewRequest("GET", $"/{Account}/mycontainer/hello.txt?{query}");

        Assert.Equal(AuthDecision.Forward, Authenticator.Authenticate(request, BlobOperation.Read, "mycontainer", "hello.txt").Decision);
    }

    // ---- SAS made by the real SDK --------------------------------------------------------------------------

    // The blob names of the SDK-signed tests (see SignedRequests.BlobNames).
    public static TheoryData<string> BlobNames => SignedRequests.BlobNames;

    [Theory]
    [MemberData(nameof(BlobNames))]
    public async Task A_blob_sas_from_GenerateSasUri_is_verified_on_the_sdks_own_request(string blobName)
    {
        BlobClient signer = new BlobServiceClient(ServiceUri, Credential, Options(new RecordingTransport())).GetBlobContainerClient("c").GetBlobClient(blobName);
        Uri sas = signer.GenerateSasUri(BlobSasPermissions.Read | BlobSasPermissions.Write, DateTimeOffset.UtcNow.AddHours(1));
        var transport = new RecordingTransport();
        var blob = new BlobClient(sas, Options(transport));

        await Swallow(() => blob.DownloadContentAsync());
        await Swallow(() => blob.UploadAsync(BinaryData.FromString("hi"), overwrite: true));

        Assert.Equal(2, transport.Captured.Count);
        Assert.Equal(AuthOutcome.Verified, Authenticator.Authenticate(Replay(transport.Captured[0]), BlobOperation.Read, "c", blobName));
        Assert.Equal(AuthOutcome.Verified, Authenticator.Authenticate(Replay(transport.Captured[1]), BlobOperation.Write, "c", blobName));
    }

    [Fact]
    public async Task A_container_sas_covers_every_blob_of_its_container_only()
    {
        BlobContainerClient signer = new BlobServiceClient(ServiceUri, Credential, Options(new RecordingTransport())).GetBlobContainerClient("c");
        Uri sas = signer.GenerateSasUri(BlobContainerSasPermissions.Read | BlobContainerSasPermissions.Delete, DateTimeOffset.UtcNow.AddHours(1));
        var transport = new RecordingTransport();
        var container = new BlobContainerClient(sas, Options(transport));

        await Swallow(() => container.GetBlobClient("a/b c.txt").DeleteAsync());
        HttpRequest request = Replay(Assert.Single(transport.Captured));

        Assert.Equal(AuthOutcome.Verified, Authenticator.Authenticate(request, BlobOperation.Delete, "c", "a/b c.txt"));
        Assert.Equal("AuthenticationFailed", Authenticator.Authenticate(request, BlobOperation.Delete, "other", "a/b c.txt").ErrorCode);
        Assert.Equal("AuthorizationPermissionMismatch", Authenticator.Authenticate(request, BlobOperation.Write, "c", "a/b c.txt").ErrorCode);
    }

    [Fact]
    public void A_sas_from_BlobSasBuilder_is_verified_and_refused_for_another_blob()
    {
        var builder = new BlobSasBuilder(BlobSasPermissions.Read, DateTimeOffset.UtcNow.AddHours(1))
        {
            BlobContainerName = "c",
            BlobName = "dir/ü x.txt",
            StartsOn = DateTimeOffset.UtcNow.AddMinutes(-5),
            Protocol = SasProtocol.HttpsAndHttp,
        };
        string query = builder.ToSasQueryParameters(Credential, out string sdkStringToSign).ToString();

        AuthOutcome mine = Authenticator.Authenticate(NewRequest("GET", $"/{Account}/c/dir/%C3%BC%20x.txt?{query}"), BlobOperation.Read, "c", "dir/ü x.txt");
        AuthOutcome other = Authenticator.Authenticate(NewRequest("GET", $"/{Account}/c/dir/other.txt?{query}"), BlobOperation.Read, "c", "dir/other.txt");

        Assert.True(mine.Decision == AuthDecision.Verified, $"{mine}\nSDK string to sign: {sdkStringToSign}");
        Assert.Equal("AuthenticationFailed", other.ErrorCode);
    }

    [Fact]
    public async Task An_account_sas_from_AccountSasBuilder_is_verified_on_the_sdks_own_request()
    {
        var builder = new AccountSasBuilder(AccountSasPermissions.Read | AccountSasPermissions.Write, DateTimeOffset.UtcNow.AddHours(1), AccountSasServices.Blobs, AccountSasResourceTypes.Object);
        var sas = new Uri($"{ServiceUri}/c/x%20y.txt?{builder.ToSasQueryParameters(Credential)}");
        var transport = new RecordingTransport();

        await Swallow(() => new BlobClient(sas, Options(transport)).GetPropertiesAsync());

        Assert.Equal(AuthOutcome.Verified, Authenticator.Authenticate(Replay(Assert.Single(transport.Captured)), BlobOperation.Read, "c", "x y.txt"));
    }
}
