using System.Diagnostics.CodeAnalysis;
using System.Net;
using Azure;
using Azure.Core;
using Azure.Core.Pipeline;
using Azure.Storage;
using Azure.Storage.Blobs;
using Azure.Storage.Blobs.Models;
using Azure.Storage.Blobs.Specialized;
using Azure.Storage.Sas;
using FaaSCache.Host.BlobEndpoint;
using FaaSCache.Host.BlobEndpoint.Auth;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;

namespace FaaSCache.Host.Tests.BlobEndpoint;

/// <summary>
/// The authenticator against the worked examples of shared/reference/blob-rest-for-sdks.md §7 and against requests
/// signed by the real Azure.Storage.Blobs SDK, captured by a transport that sends nothing and replayed into a
/// <see cref="DefaultHttpContext"/> the way Kestrel would present them (raw target kept).
/// </summary>
[Trait("Category", "Unit")]
public sealed class StorageRequestAuthenticatorTests
{
    private const string Account = "devstoreaccount1";
    private const string Key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
    private const string ExampleDate = "Sat, 21 Nov 2026 10:00:00 GMT";

    // Between the examples' x-ms-date and their SAS expiry (2026-11-22T00:00:00Z).
    private static readonly FixedTime BeforeExampleExpiry = new(new DateTimeOffset(2026, 11, 21, 10, 0, 0, TimeSpan.Zero));
    private static readonly FixedTime AfterExampleExpiry = new(new DateTimeOffset(2026, 11, 22, 0, 0, 1, TimeSpan.Zero));
    private static readonly StorageSharedKeyCredential Credential = new(Account, Key);
    private static readonly Uri ServiceUri = new($"http://127.0.0.1:10000/{Account}");

    private const string ExampleGetStringToSign =
        "GET\n\n\n\n\n\n\n\n\n\n\n\n" +
        "x-ms-client-request-id:5d2c1f3e-1111-4a4a-9b9b-0123456789ab\nx-ms-date:Sat, 21 Nov 2026 10:00:00 GMT\n" +
        "x-ms-range:bytes=0-268435455\nx-ms-return-client-request-id:true\nx-ms-version:2026-10-06\n" +
        "/devstoreaccount1/devstoreaccount1/mycontainer/hello.txt";

    private const string ExampleServiceSasQuery =
        "sv=2026-10-06&sr=b&sp=r&se=2026-11-22T00%3A00%3A00Z&spr=https%2Chttp&sig=LfKOh%2BurOl9vTECWLCc4jzMAq9fGgUD5YlTASakNiA4%3D";

    private const string ExampleAccountSasQuery =
        "sv=2026-10-06&ss=b&srt=sco&sp=rwdlac&se=2026-11-22T00%3A00%3A00Z&spr=https%2Chttp&sig=ZbYIewu0VnTeIuKdWWsvYe5r9Lw6Mjt%2F%2BbhFq%2FGvBDY%3D";

    private static readonly StorageRequestAuthenticator Authenticator = new(Account, Key);

    // The worked examples are dated 2026-11-21 10:00 GMT: a Shared Key request is verified within 15 minutes of its date.
    private static readonly StorageRequestAuthenticator AtExampleTime = new(Account, Key, BeforeExampleExpiry);

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

    [Theory]
    [InlineData("", "is empty")]
    [InlineData("SharedKey", "'SharedKey <account>:<signature>'")]
    [InlineData("SharedKey devstoreaccount1", "'SharedKey <account>:<signature>'")]
    [InlineData("SharedKey :PCv4IkGUSzW0EOpHwD8ocGZnuoDmg2D8CwqwgcDm9n0=", "'SharedKey <account>:<signature>'")]
    [InlineData("SharedKey devstoreaccount1:", "'SharedKey <account>:<signature>'")]
    [InlineData("Basic ZGV2OmtleQ==", "scheme 'Basic'")]
    public void A_malformed_authorization_header_is_refused_naming_what_is_wrong(string header, string named)
    {
        HttpRequest request = ExampleGet();
        request.Headers.Authorization = header;

        AuthOutcome outcome = Authenticator.Authenticate(request, BlobOperation.Read, "mycontainer", "hello.txt");

        Assert.Equal(AuthDecision.Refused, outcome.Decision);
        Assert.Equal("AuthenticationFailed", outcome.ErrorCode);
        Assert.Contains(named, outcome.Message, StringComparison.Ordinal);
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
    [InlineData("Bearer eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.e30.c2ln")]
    [InlineData("SharedKeyLite devstoreaccount1:PCv4IkGUSzW0EOpHwD8ocGZnuoDmg2D8CwqwgcDm9n0=")]
    public void A_token_or_shared_key_lite_is_forwarded_for_storage_to_check(string header)
    {
        HttpRequest request = ExampleGet();
        request.Headers.Authorization = header;

        Assert.Equal(AuthDecision.Forward, Authenticator.Authenticate(request, BlobOperation.Read, "mycontainer", "hello.txt").Decision);
    }

    [Fact]
    public void An_anonymous_request_is_forwarded_for_storage_to_decide()
    {
        Assert.Equal(AuthDecision.Forward, Authenticator.Authenticate(ExampleGet(), BlobOperation.Read, "mycontainer", "hello.txt").Decision);
    }

    [Theory]
    [InlineData("sv=2026-10-06&sr=b&sp=r&se=2026-11-22T00%3A00%3A00Z&skoid=00000000-0000-0000-0000-000000000000&sktid=t&skt=x&ske=y&sks=b&skv=2026-10-06&sig=AAAA")]
    [InlineData("sv=2019-12-12&sr=b&sp=r&se=2026-11-22T00%3A00%3A00Z&sig=AAAA")]
    [InlineData("sv=2026-10-06&sr=b&si=policy1&sig=AAAA")]
    public void A_user_delegation_old_or_stored_policy_sas_is_forwarded(string query)
    {
        HttpRequest request = NewRequest("GET", $"/{Account}/mycontainer/hello.txt?{query}");

        Assert.Equal(AuthDecision.Forward, Authenticator.Authenticate(request, BlobOperation.Read, "mycontainer", "hello.txt").Decision);
    }

    // ---- Shared Key details ----------------------------------------------------------------------------------

    [Fact]
    public void A_date_header_is_signed_on_the_date_line_and_an_sdk_style_empty_line_is_accepted_too()
    {
        HttpRequest request = NewRequest("GET", "/devstoreaccount1/mycontainer/hello.txt", ("Date", ExampleDate), ("x-ms-date", ExampleDate), ("x-ms-version", "2026-10-06"));
        string stringToSign = Authenticator.StringToSignForSharedKey(request);
        string emptyDateLine = stringToSign.Replace($"\n{ExampleDate}\n\n", "\n\n\n", StringComparison.Ordinal);

        Assert.StartsWith($"GET\n\n\n\n\n\n{ExampleDate}\n", stringToSign, StringComparison.Ordinal);
        foreach (string signed in new[] { stringToSign, emptyDateLine })
        {
            request.Headers.Authorization = $"SharedKey {Account}:{Authenticator.Sign(signed)}";
            Assert.Equal(AuthOutcome.Verified, AtExampleTime.Authenticate(request, BlobOperation.Read, "mycontainer", "hello.txt"));
        }
    }

    [Fact]
    public void A_zero_content_length_is_signed_as_an_empty_line()
    {
        HttpRequest request = NewRequest("PUT", "/devstoreaccount1/c/empty", ("Content-Length", "0"), ("x-ms-blob-type", "BlockBlob"));

        Assert.StartsWith("PUT\n\n\n\n", Authenticator.StringToSignForSharedKey(request), StringComparison.Ordinal);
    }

    [Fact]
    public void The_sdk_header_order_ignores_dashes_and_puts_underscores_before_digits()
    {
        string[] names = ["x-ms-meta-k1", "x-ms-version", "x-ms-meta-k_1", "x-ms-meta-a-c", "x-ms-meta-ab", "x-ms-date"];

        string[] sorted = [.. names.Order(SdkHeaderNameComparer.Instance)];

        Assert.Equal(new[] { "x-ms-date", "x-ms-meta-ab", "x-ms-meta-a-c", "x-ms-meta-k_1", "x-ms-meta-k1", "x-ms-version" }, sorted);
    }

    // ---- Requests signed by the real SDK ---------------------------------------------------------------------

    public static TheoryData<string> BlobNames => new()
    {
        "hello.txt",
        "dir one/sub dir/naïve résumé ü.txt",
        "日本語/データ (1).bin",
        "odd+name=x&y;z!'~*.txt",
    };

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

    [Fact]
    public async Task Sdk_metadata_names_that_sort_differently_are_verified_in_the_sdk_order()
    {
        var transport = new RecordingTransport();
        BlobClient blob = new BlobServiceClient(ServiceUri, Credential, Options(transport)).GetBlobContainerClient("c").GetBlobClient("b.txt");

        await Swallow(() => blob.SetMetadataAsync(new Dictionary<string, string> { ["k1"] = "1", ["k_1"] = "2" }));
        HttpRequest request = Replay(Assert.Single(transport.Captured));
        string sdkSignature = request.Headers.Authorization.ToString().Split(':')[1];

        // The ordinal string is not what the SDK signed, so this passes only through the SDK-order retry.
        Assert.NotEqual(sdkSignature, Authenticator.Sign(Authenticator.StringToSignForSharedKey(request)));
        Assert.Equal(AuthOutcome.Verified, Authenticator.Authenticate(request, BlobOperation.Write, "c", "b.txt"));
    }

    [Fact]
    public async Task Sdk_requests_with_random_metadata_names_are_all_verified()
    {
        // Names from the characters where the SDK's order and ordinal order part ways: _ - ' . ~ and digits.
        const string alphabet = "ab19_-'.~";
        var random = new Random(20261126);
        var transport = new RecordingTransport();
        BlobClient blob = new BlobServiceClient(ServiceUri, Credential, Options(transport)).GetBlobContainerClient("c").GetBlobClient("b.txt");

        for (int i = 0; i < 200; i++)
        {
            var metadata = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
            for (int n = random.Next(2, 7); metadata.Count < n;)
            {
                metadata[new string([.. Enumerable.Range(0, random.Next(1, 5)).Select(_ => alphabet[random.Next(alphabet.Length)])])] = "v";
            }

            await Swallow(() => blob.SetMetadataAsync(metadata));
        }

        Assert.Equal(200, transport.Captured.Count);
        Assert.All(transport.Captured, captured =>
        {
            AuthOutcome outcome = Authenticator.Authenticate(Replay(captured), BlobOperation.Write, "c", "b.txt");
            Assert.True(outcome.Decision == AuthDecision.Verified, $"{string.Join(", ", captured.Headers.Select(h => h.Name))}: {outcome}");
        });
    }

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

    // ---- Helpers ---------------------------------------------------------------------------------------------

    private static HttpRequest ExampleGet() => NewRequest("GET", "/devstoreaccount1/mycontainer/hello.txt",
        ("x-ms-client-request-id", "5d2c1f3e-1111-4a4a-9b9b-0123456789ab"), ("x-ms-date", ExampleDate),
        ("x-ms-range", "bytes=0-268435455"), ("x-ms-return-client-request-id", "true"), ("x-ms-version", "2026-10-06"));

    /// <summary>A request as Kestrel presents it: the raw target as sent, the path decoded, a loopback caller over http.</summary>
    private static HttpRequest NewRequest(string method, string target, params (string Name, string Value)[] headers)
    {
        var context = new DefaultHttpContext();
        context.Features.Get<IHttpRequestFeature>()!.RawTarget = target;
        context.Connection.RemoteIpAddress = IPAddress.Loopback;
        HttpRequest request = context.Request;
        request.Method = method;
        request.Scheme = "http";
        request.Host = new HostString("127.0.0.1", 10000);
        int question = target.IndexOf('?', StringComparison.Ordinal);
        request.Path = PathString.FromUriComponent(question < 0 ? target : target[..question]);
        request.QueryString = question < 0 ? QueryString.Empty : QueryString.FromUriComponent(target[question..]);
        foreach ((string name, string value) in headers)
        {
            request.Headers.Append(name, value);
        }

        return request;
    }

    /// <summary>What HttpClient would put on the wire for a captured SDK request: PathAndQuery as the target, Content-Length from the content.</summary>
    private static HttpRequest Replay(CapturedRequest captured)
    {
        HttpRequest request = NewRequest(captured.Method, captured.Uri.PathAndQuery, [.. captured.Headers]);
        if (captured.ContentLength is long length)
        {
            request.ContentLength = length;
        }

        return request;
    }

    private static BlobClientOptions Options(RecordingTransport transport)
    {
        var options = new BlobClientOptions(BlobClientOptions.ServiceVersion.V2025_11_05) { Transport = transport };
        options.Retry.MaxRetries = 0;
        return options;
    }

    private static Uri SasUri(BlobSasBuilder builder) =>
        new($"{ServiceUri}/{builder.BlobContainerName}/{Uri.EscapeDataString(builder.BlobName)}?{builder.ToSasQueryParameters(Credential)}");

    // The canned answers carry no real blob; what matters is the request the SDK signed before it read them.
    private static async Task Swallow(Func<Task> call)
    {
        try
        {
            await call();
        }
        catch (RequestFailedException)
        {
        }
        catch (InvalidOperationException)
        {
        }
        catch (FormatException)
        {
        }
    }

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

    [Fact]
    public void A_sas_on_an_operation_the_endpoint_forwards_goes_to_storage_unchecked_and_a_junk_shared_key_does_not()
    {
        HttpRequest sas = NewRequest("GET", $"/devstoreaccount1/mycontainer?restype=container&comp=list&{ExampleServiceSasQuery}");
        HttpRequest junk = NewRequest("GET", "/devstoreaccount1/mycontainer?restype=container&comp=list", ("x-ms-date", ExampleDate));
        junk.Headers.Authorization = "SharedKey devstoreaccount1:eQ==";

        Assert.Equal(AuthDecision.Forward, AtExampleTime.Authenticate(sas, BlobOperation.Other, "mycontainer", "").Decision);
        Assert.Equal("AuthenticationFailed", AtExampleTime.Authenticate(junk, BlobOperation.Other, "mycontainer", "").ErrorCode);
    }

    private sealed class FixedTime(DateTimeOffset now) : TimeProvider
    {
        public override DateTimeOffset GetUtcNow() => now;
    }

    private sealed record CapturedRequest(string Method, Uri Uri, IReadOnlyList<(string Name, string Value)> Headers, long? ContentLength);

    /// <summary>Records each request the pipeline would send (signed: it is the last step) and answers it with an empty success.</summary>
    private sealed class RecordingTransport : HttpPipelineTransport
    {
        public List<CapturedRequest> Captured { get; } = [];

        // Only builds request objects; nothing is ever sent.
        public override Request CreateRequest() => HttpClientTransport.Shared.CreateRequest();

        public override void Process(HttpMessage message)
        {
            Request request = message.Request;
            long? length = request.Content is not null && request.Content.TryComputeLength(out long computed) ? computed : null;
            lock (Captured)
            {
                Captured.Add(new CapturedRequest(request.Method.Method, request.Uri.ToUri(), [.. request.Headers.Select(h => (h.Name, h.Value))], length));
            }

            int status = request.Method.Method switch { "PUT" => 201, "DELETE" => 202, _ => 200 };
            message.Response = new CannedResponse(status);
        }

        public override ValueTask ProcessAsync(HttpMessage message)
        {
            Process(message);
            return ValueTask.CompletedTask;
        }
    }

    private sealed class CannedResponse(int status) : Response
    {
        private readonly Dictionary<string, string> _headers = new(StringComparer.OrdinalIgnoreCase)
        {
            ["ETag"] = "\"0x8DC0000000000001\"",
            ["Last-Modified"] = "Sat, 21 Nov 2026 10:00:00 GMT",
            ["Content-Length"] = "0",
            ["x-ms-blob-type"] = "BlockBlob",
        };

        public override int Status => status;

        public override string ReasonPhrase => "";

        public override Stream? ContentStream { get; set; } = new MemoryStream();

        public override string ClientRequestId { get; set; } = "";

        public override void Dispose()
        {
        }

        protected override bool ContainsHeader(string name) => _headers.ContainsKey(name);

        protected override IEnumerable<HttpHeader> EnumerateHeaders() => _headers.Select(h => new HttpHeader(h.Key, h.Value));

        protected override bool TryGetHeader(string name, [NotNullWhen(true)] out string? value) => _headers.TryGetValue(name, out value);

        protected override bool TryGetHeaderValues(string name, [NotNullWhen(true)] out IEnumerable<string>? values)
        {
            bool found = _headers.TryGetValue(name, out string? value);
            values = found ? [value!] : null;
            return found;
        }
    }
}
