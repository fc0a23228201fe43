using FaaSCache.Host.BlobEndpoint;
using Microsoft.AspNetCore.Http;

namespace FaaSCache.Host.Tests.BlobEndpoint;

// Inside the namespace: at the top, the namespace FaaSCache.Options would hide SignedRequests.Options.
using static SignedRequests;

/// <summary>
/// The façade's choice of scheme: what the Authorization header names (Shared Key verified here, a token or SharedKeyLite
/// forwarded, anything else or a malformed header refused), anonymous requests, and a SAS on an operation the endpoint
/// forwards.
/// </summary>
[Trait("Category", "Unit")]
public sealed class StorageRequestAuthenticatorSchemeTests
{
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

    [Fact]
    public void A_sas_on_an_operation_the_endpoint_forwards_goes_to_storage_unchecked_and_a_junk_shared_key_does_not()
    {
        HttpRequest sas = NewRequest("GET", $"/devstoreaccount1/mycontainer?restype=container&comp=list&{ExampleServiceSasQuery}");
        HttpRequest junk = NewRequest("GET", "/devstoreaccount1/mycontainer?restype=container&comp=list", ("x-ms-date", ExampleDate));
        junk.Headers.Authorization = "SharedKey devstoreaccount1:eQ==";

        Assert.Equal(AuthDecision.Forward, AtExampleTime.Authenticate(sas, BlobOperation.Other, "mycontainer", "").Decision);
        Assert.Equal("AuthenticationFailed", AtExampleTime.Authenticate(junk, BlobOperation.Other, "mycontainer", "").ErrorCode);
    }
}
