namespace FaaSCache.Host.BlobEndpoint.Auth;

/// <summary>
/// Storage's table of what a SAS's signed permissions (<c>sp</c>) allow, as Azurite applies it; any one of the
/// letters grants the operation.
/// </summary>
internal static class SasPermissions
{
    /// <summary>
    /// Verified when <paramref name="permissions"/> grant <paramref name="operation"/> (create-only for a Put Blob under
    /// <c>c</c> without <c>w</c>), else 403 <c>AuthorizationPermissionMismatch</c> naming the letter needed.
    /// </summary>
    public static AuthOutcome Check(BlobOperation operation, string permissions)
    {
        // r reads; w writes anything; c creates a blob that does not exist yet (Put Blob only: Put Block and
        // Put Block List need w); d deletes.
        bool Has(char letter) => permissions.Contains(letter, StringComparison.Ordinal);
        if (operation == BlobOperation.Create && !Has('w') && Has('c'))
        {
            return AuthOutcome.VerifiedCreateOnly;
        }

        bool allowed = operation switch
        {
            BlobOperation.Read => Has('r'),
            BlobOperation.Create or BlobOperation.Write => Has('w'),
            BlobOperation.Delete => Has('d'),
            _ => false,
        };
        if (!allowed)
        {
            string needed = operation switch
            {
                BlobOperation.Read => "reading a blob needs r",
                BlobOperation.Create => "Put Blob needs w, or c for a blob that does not exist yet",
                BlobOperation.Write => "Put Block and Put Block List need w (c is not enough)",
                _ => "deleting a blob needs d",
            };
            return AuthOutcome.Refuse("AuthorizationPermissionMismatch",
                $"This request is not authorized to perform this operation using this permission: {needed}, and the SAS grants sp={permissions}.");
        }

        return AuthOutcome.Verified;
    }
}
