namespace FaaSCache.Host.BlobEndpoint;

/// <summary>What a blob request does, in the terms a SAS permission is granted in (storage's table, as Azurite applies it).</summary>
public enum BlobOperation
{
    /// <summary>Get Blob or Get Blob Properties (GET or HEAD of a blob): needs <c>r</c>.</summary>
    Read,

    /// <summary>Put Blob: needs <c>w</c>, or <c>c</c> while the blob does not exist yet (<see cref="AuthOutcome.CreateOnly"/>).</summary>
    Create,

    /// <summary>Put Block or Put Block List: needs <c>w</c> (<c>c</c> is not enough).</summary>
    Write,

    /// <summary>Delete Blob: needs <c>d</c>.</summary>
    Delete,

    /// <summary>
    /// Anything the endpoint forwards instead of serving (listings, containers, metadata, leases, ...): a Shared Key is
    /// verified here all the same, but a SAS goes on unchanged and storage applies its permissions.
    /// </summary>
    Other,
}
