namespace FaaSCache.Host.BlobEndpoint;

/// <summary>
/// The answer of <see cref="StorageRequestAuthenticator.Authenticate"/>. A refusal carries what the error response
/// needs (§6 of the Blob REST reference): the status, the <c>x-ms-error-code</c>, the message, and for
/// <c>AuthenticationFailed</c> the <c>AuthenticationErrorDetail</c>. A forward carries why in <see cref="Message"/>.
/// </summary>
/// <param name="Decision">Serve, forward or refuse.</param>
/// <param name="Status">The HTTP status of a refusal (403); 200 otherwise.</param>
/// <param name="ErrorCode">The storage error code of a refusal, e.g. <c>AuthenticationFailed</c>.</param>
/// <param name="Message">What was wrong (a refusal) or why storage must decide (a forward).</param>
/// <param name="Detail">The <c>AuthenticationErrorDetail</c> element of a failed signature: the string the server signed.</param>
/// <param name="CreateOnly">Verified by a SAS that grants <c>c</c> but not <c>w</c>: a Put Blob may create the blob, never replace it.</param>
public sealed record AuthOutcome(AuthDecision Decision, int Status = 200, string? ErrorCode = null, string? Message = null, string? Detail = null, bool CreateOnly = false)
{
    /// <summary>The request may be served here.</summary>
    public static AuthOutcome Verified { get; } = new(AuthDecision.Verified);

    /// <summary>The request may create the blob but not replace it (a SAS with <c>c</c> and no <c>w</c>).</summary>
    public static AuthOutcome VerifiedCreateOnly { get; } = new(AuthDecision.Verified, CreateOnly: true);

    /// <summary>Storage must decide; no reason given.</summary>
    public static AuthOutcome Forward { get; } = new(AuthDecision.Forward);

    /// <summary>Storage must decide, for the given reason (for the log).</summary>
    public static AuthOutcome ForwardBecause(string reason) => new(AuthDecision.Forward, Message: reason);

    /// <summary>A 403 refusal with a storage error code.</summary>
    public static AuthOutcome Refuse(string errorCode, string message, string? detail = null) =>
        new(AuthDecision.Refused, StatusCodes.Status403Forbidden, errorCode, message, detail);
}
