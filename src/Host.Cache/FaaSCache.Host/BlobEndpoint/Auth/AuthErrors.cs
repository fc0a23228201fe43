namespace FaaSCache.Host.BlobEndpoint.Auth;

/// <summary>The words storage answers a failed authentication with, shared by the Shared Key and SAS verifiers.</summary>
internal static class AuthErrors
{
    /// <summary>The <c>x-ms-error-code</c> of a credential that is malformed, wrong, stale or out of its time frame.</summary>
    public const string AuthenticationFailed = "AuthenticationFailed";

    /// <summary>Storage's message for <see cref="AuthenticationFailed"/>; ours adds what was wrong after it.</summary>
    public const string ServerFailedToAuthenticate =
        "Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature.";

    // Echoed values are the client's own, but keep a hostile header from filling the log.
    public static string Shorten(string value) => value.Length <= 120 ? value : value[..120] + "…";
}
