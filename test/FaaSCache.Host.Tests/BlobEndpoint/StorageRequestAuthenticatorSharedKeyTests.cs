using Azure;
using Azure.Storage.Blobs.Models;
using Azure.Storage.Blobs.Specialized;
using FaaSCache.Host.BlobEndpoint;
using Microsoft.AspNetCore.Http;

namespace FaaSCache.Host.Tests.BlobEndpoint;

// Inside the namespace: at the top, the namespace FaaSCache.Options would hide SignedRequests.Options.
using static SignedRequests;

/// <summary>
/// Shared Key (SharedKeyVerifier behind the authenticator): the reference's worked examples, signatures that do not verify,
/// storage's 15-minute date window, and every request the real SDK signs for the six operations the endpoint serves.
/// </summary>
[Trait("Category", "Unit")]
public sealed class StorageRequestAuthenticatorSharedKeyTests
{
    // ---- The reference's worked examples -------------------------------------------------------------------

    [Fact]
    public void The_reference_get_example_gives_its_string_to_sign_and_signature()
    {
        HttpRequest request = ExampleGet();

        string stringToSign = Authenticator.StringToSignForSharedKey(request);

        Assert.Equal(ExampleGetStringToSign, stringToSign);
        Assert.Equal("PCv4IkGUSzW0EOpHwD8ocGZnuoDmg2D8CwqwgcDm9n0=", Authenticator.Sign(stringToSign));
    }

    [Fact]
    public void The_reference_get_example_signed_with_its_signature_is_verified()
    {
        HttpRequest request = ExampleGet();
        request.Headers.Authorization = $"SharedKey {Account}:PCv4IkGUSzW0EOpHwD8ocGZnuoDmg2D8CwqwgcDm9n0=";

        Assert.Equal(AuthOutcome.Verified, AtExampleTime.Authenticate(request, BlobOperation.Read, "mycontainer", "hello.txt"));
    }

    [Fact]
    public void The_reference_put_blob_example_is_verified_with_its_signature()
    {
        HttpRequest request = NewRequest("PUT", "/devstoreaccount1/mycontainer/hello.txt",
            ("Content-Length", "11"), ("If-None-Match", "*"), ("x-ms-blob-type", "BlockBlob"),
            ("x-ms-date", ExampleDate), ("x-ms-version", "2026-10-06"));
        request.Headers.Authorization = $"SharedKey {Account}:fSP5L4Qit0F5czkp90c3cpAdvKVogvf4C57sfJh+zK4=";

        Assert.Equal(
            "PUT\n\n\n11\n\n\n\n\n\n*\n\n\nx-ms-blob-type:BlockBlob\nx-ms-date:Sat, 21 Nov 2026 10:00:00 GMT\nx-ms-version:2026-10-06\n" +
            "/devstoreaccount1/devstoreaccount1/mycontainer/hello.txt",
            Authenticator.StringToSignForSharedKey(request));
        Assert.Equal(AuthOutcome.Verified, AtExampleTime.Authenticate(request, BlobOperation.Write, "mycontainer", "hello.txt"));
    }

    [Fact]
    public void The_reference_put_block_example_signs_the_query_and_is_verified()
    {
        HttpRequest request = NewRequest("PUT", "/devstoreaccount1/mycontainer/big.bin?comp=block&blockid=AAAA",
            ("Content-Length", "4194304"), ("x-ms-date", ExampleDate), ("x-ms-version", "2026-10-06"));
        request.Headers.Authorization = $"SharedKey {Account}:66OULt0s/RGedUBsraWEsvoqdG9Is2qD/lRim3S1FKc=";

        Assert.EndsWith("/devstoreaccount1/devstoreaccount1/mycontainer/big.bin\nblockid:AAAA\ncomp:block",
            Authenticator.StringToSignForSharedKey(request), StringComparison.Ordinal);
        Assert.Equal(AuthOutcome.Verified, AtExampleTime.Authenticate(request, BlobOperation.Write, "mycontainer", "big.bin"));
    }

    // ---- Refusals ------------------------------------------------------------------------------------------

    [Fact]
    public void A_tampered_signature_is_refused_with_the_string_to_sign_in_the_detail()
    {
        const string tampered = "QCv4IkGUSzW0EOpHwD8ocGZnuoDmg2D8CwqwgcDm9n0=";
        HttpRequest request = ExampleGet();
        request.Headers.Authorization = $"SharedKey {Account}:{tampered}";

        AuthOutcome outcome = Authenticator.Authenticate(request, BlobOperation.Read, "mycontainer", "hello.txt");

        Assert.Equal(AuthDecision.Refused, outcome.Decision);
        Assert.Equal(403, outcome.Status);
        Assert.Equal("AuthenticationFailed", outcome.ErrorCode);
        Assert.Equal(
            $"The MAC signature found in the HTTP request '{tampered}' is not the same as any computed signature. " +
            $"Server used following string to sign: '{ExampleGetStringToSign}'.",
            outcome.Detail);
    }

    [Fact]
    public void A_signed_request_changed_after_signing_is_refused()
    {
        HttpRequest request = ExampleGet();
        request.Headers.Authorization = $"SharedKey {Account}:PCv4IkGUSzW0EOpHwD8ocGZnuoDmg2D8CwqwgcDm9n0=";
        request.Headers["x-ms-range"] = "bytes=0-1";

        AuthOutcome outcome = Authenticator.Authenticate(request, BlobOperation.Read, "mycontainer", "hello.txt");

        Assert.Equal("AuthenticationFailed", outcome.ErrorCode);
        Assert.Contains("x-ms-range:bytes=0-1\n", outcome.Detail, StringComparison.Ordinal);
    }

    [Fact]
    public void A_shared_key_for_another_account_is_refused_naming_both_accounts()
    {
        HttpRequest request = ExampleGet();
        request.Headers.Authorization = "SharedKey otheraccount:PCv4IkGUSzW0EOpHwD8ocGZnuoDmg2D8CwqwgcDm9n0=";

        AuthOutcome outcome = Authenticator.Authenticate(request, BlobOperation.Read, "mycontainer", "hello.txt");

        Assert.Equal(AuthDecision.Refused, outcome.Decision);
        Assert.Equal("AuthenticationFailed", outcome.ErrorCode);
        Assert.Contains("'otheraccount'", outcome.Message, StringComparison.Ordinal);
        Assert.Contains($"'{Account}'", outcome.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_signature_that_is_not_base64_is_refused_as_a_wrong_signature()
    {
        HttpRequest request = ExampleGet();
        request.Headers.Authorization = $"SharedKey {Account}:not*base64!";

        AuthOutcome outcome = Authenticator.Authenticate(request, BlobOperation.Read, "mycontainer", "hello.txt");

        Assert.Equal("AuthenticationFailed", outcome.ErrorCode);
        Assert.StartsWith("The MAC signature found in the HTTP request 'not*base64!'", outcome.Detail, StringComparison.Ordinal);
    }

    // ---- The date window -----------------------------------------------------------------------------------

    [Theory]
    [InlineData(-16 * 60, "too old")]
    [InlineData(-3 * 24 * 3600, "too old")]
    [InlineData(365 * 24 * 3600, "too far in the future")]
    [InlineData(16 * 60, "too far in the future")]
    public void A_shared_key_request_dated_outside_storages_15_minute_window_is_refused(int dateMinusNowSeconds, string why)
    {
        HttpRequest request = ExampleGet();
        request.Headers.Authorization = $"SharedKey {Account}:PCv4IkGUSzW0EOpHwD8ocGZnuoDmg2D8CwqwgcDm9n0=";
        var authenticator = new StorageRequestAuthenticator(Account, Key, new FixedTime(BeforeExampleExpiry.GetUtcNow().AddSeconds(-dateMinusNowSeconds)));

        AuthOutcome outcome = authenticator.Authenticate(request, BlobOperation.Read, "mycontainer", "hello.txt");

        Assert.Equal(AuthDecision.Refused, outcome.Decision);
        Assert.Equal(403, outcome.Status);
        Assert.Equal("AuthenticationFailed", outcome.ErrorCode);
        Assert.Contains(why, outcome.Message, StringComparison.Ordinal);
        Assert.Contains("Request date header " + why, outcome.Detail, StringComparison.Ordinal);
    }

    [Fact]
    public void A_shared_key_request_within_the_window_is_verified_and_one_without_any_date_is_refused()
    {
        HttpRequest request = ExampleGet();
        request.Headers.Authorization = $"SharedKey {Account}:PCv4IkGUSzW0EOpHwD8ocGZnuoDmg2D8CwqwgcDm9n0=";
        var fourteenMinutesLater = new StorageRequestAuthenticator(Account, Key, new FixedTime(BeforeExampleExpiry.GetUtcNow().AddMinutes(14)));
        Assert.Equal(AuthOutcome.Verified, fourteenMinutesLater.Authenticate(request, BlobOperation.Read, "mycontainer", "hello.txt"));

        HttpRequest undated = NewRequest("GET", "/devstoreaccount1/mycontainer/hello.txt", ("x-ms-version", "2026-10-06"));
        undated.Headers.Authorization = $"SharedKey {Account}:{AtExampleTime.Sign(AtExampleTime.StringToSignForSharedKey(undated))}";
        AuthOutcome outcome = AtExampleTime.Authenticate(undated, BlobOperation.Read, "mycontainer", "hello.txt");

        Assert.Equal("AuthenticationFailed", outcome.ErrorCode);
        Assert.Contains("neither an x-ms-date nor a Date header", outcome.Message, StringComparison.Ordinal);
    }

    // ---- Requests signed by the real SDK ---------------------------------------------------------------------

    // The blob names of the SDK-signed tests (see SignedRequests.BlobNames).
    public static TheoryData<string> BlobNames => SignedRequests.BlobNames;

    [Theory]
    [MemberData(nameof(BlobNames))]
    public async Task Every_request_the_sdk_signs_for_the_six_operations_is_verified(string blobName)
    {
        var transport = new RecordingTransport();
        var service = new BlobServiceClient(ServiceUri, Credential, Options(transport));
        BlobClient blob = service.GetBlobContainerClient("my-container").GetBlobClient(blobName);
        BlockBlobClient blocks = service.GetBlobContainerClient("my-container").GetBlockBlobClient(blobName);
        // Metadata names whose ordinal and SDK orders differ (k1 / k_1), and a capitalized one.
        var metadata = new Dictionary<string, string> { ["Author"] = "Ada", ["k1"] = "one", ["k_1"] = "under", ["zeta"] = "last" };
        string blockId = Convert.ToBase64String(Guid.NewGuid().ToByteArray());

        await Swallow(() => blob.GetPropertiesAsync());
        await Swallow(() => blob.DownloadContentAsync(new BlobDownloadOptions { Range = new HttpRange(0, 1024) }));
        await Swallow(() => blob.UploadAsync(BinaryData.FromString("hello world")));
        await Swallow(() => blob.UploadAsync(BinaryData.FromString("hello again"), new BlobUploadOptions
        {
            Metadata = metadata,
            HttpHeaders = new BlobHttpHeaders { ContentType = "text/plain; charset=utf-8", ContentLanguage = "en" },
        }));
        await Swallow(() => blocks.StageBlockAsync(blockId, new MemoryStream(new byte[4096])));
        await Swallow(() => blocks.CommitBlockListAsync([blockId], new CommitBlockListOptions { Metadata = metadata }));
        await Swallow(() => blob.DeleteAsync());

        Assert.Equal(new[] { "HEAD", "GET", "PUT", "PUT", "PUT", "PUT", "DELETE" }, transport.Captured.Select(c => c.Method));
        Assert.Contains(transport.Captured[1].Headers, h => h.Name == "x-ms-range");
        Assert.Contains(transport.Captured[2].Headers, h => h is { Name: "If-None-Match", Value: "*" });
        Assert.Contains(transport.Captured[3].Headers, h => h.Name == "x-ms-meta-k_1");
        Assert.Contains("comp=block&blockid=", transport.Captured[4].Uri.Query, StringComparison.Ordinal);
        Assert.Contains(transport.Captured[5].Headers, h => h.Name == "x-ms-meta-k_1");
        Assert.All(transport.Captured, c => Assert.DoesNotContain(' ', c.Uri.PathAndQuery));
        foreach (CapturedRequest captured in transport.Captured)
        {
            HttpRequest request = Replay(captured);
            BlobOperation operation = captured.Method switch { "HEAD" or "GET" => BlobOperation.Read, "DELETE" => BlobOperation.Delete, _ => BlobOperation.Write };

            AuthOutcome outcome = Authenticator.Authenticate(request, operation, "my-container", blobName);

            Assert.True(outcome.Decision == AuthDecision.Verified, $"{captured.Method} {captured.Uri.PathAndQuery}: {outcome}");
        }
    }
}
