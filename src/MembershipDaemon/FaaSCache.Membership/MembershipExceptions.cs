namespace FaaSCache.Membership;

/// <summary>The membership blob holds something that is not a membership list this version can read.</summary>
public sealed class MembershipFormatException : FormatException
{
    /// <summary>Creates the error for the blob named <paramref name="blob"/> (container/name).</summary>
    public MembershipFormatException(string blob, string reason, Exception? inner = null)
        : base(
            $"The membership blob '{blob}' is not a valid membership list: {reason} " +
            "Fix its JSON or delete the blob (the running instances re-create it at their next heartbeat).",
            inner)
    {
        Blob = blob;
    }

    /// <summary>Gets the blob (container/name) that could not be read.</summary>
    public string Blob { get; }
}

/// <summary>A compare-and-swap update of the membership blob lost the race more times than allowed.</summary>
public sealed class MembershipConflictException : InvalidOperationException
{
    /// <summary>Creates the error for <paramref name="blob"/> after <paramref name="attempts"/> attempts.</summary>
    public MembershipConflictException(string blob, int attempts, Exception? inner = null)
        : base(
            $"Could not update the membership blob '{blob}' in {attempts} attempts: every write found that another " +
            "instance had changed it first (HTTP 412/409). Too many instances are updating it at once, or the retry limit is too low.",
            inner)
    {
        Blob = blob;
        Attempts = attempts;
    }

    /// <summary>Gets the blob (container/name).</summary>
    public string Blob { get; }

    /// <summary>Gets the number of attempts made.</summary>
    public int Attempts { get; }
}
