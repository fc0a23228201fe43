using FaaSCache.Host.BlobEndpoint;
using FaaSCache.Host.BlobEndpoint.Auth;
using Microsoft.AspNetCore.Http;

namespace FaaSCache.Host.Tests.BlobEndpoint;

// Inside the namespace: at the top, the namespace FaaSCache.Options would hide SignedRequests.Options.
using static SignedRequests;

/// <summary>
/// The Shared Key string-to-sign as storage canonicalizes it (StringToSign, CanonicalRequest): the Date and Content-Length
/// lines, and the order the SDK signs x-ms-* headers in (SdkHeaderNameComparer), which is not ordinal for metadata names.
/// </summary>
[Trait("Category", "Unit")]
public sealed class StorageRequestAuthenticatorCanonicalizationTests
{
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
}
