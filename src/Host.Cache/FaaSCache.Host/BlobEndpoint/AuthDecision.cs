namespace FaaSCache.Host.BlobEndpoint;

/// <summary>What the endpoint does with a request after <see cref="StorageRequestAuthenticator.Authenticate"/>.</summary>
public enum AuthDecision
{
    /// <summary>Signed with this account's key and allowed to do the operation: the cache may serve it.</summary>
    Verified,

    /// <summary>Authorized by something only storage can check (a token, a delegation key, a stored policy, no credentials at all): send it on unchanged.</summary>
    Forward,

    /// <summary>Answer with <see cref="AuthOutcome.Status"/> and <see cref="AuthOutcome.ErrorCode"/>, as storage would.</summary>
    Refused,
}
