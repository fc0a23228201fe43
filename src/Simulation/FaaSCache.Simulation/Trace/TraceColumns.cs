namespace FaaSCache.Simulation.Trace;

/// <summary>
/// The column names of the public Azure Functions blob access trace 2020 (AzurePublicDataset), in file order.
/// The simulator uses <see cref="Timestamp"/> (ordering within an app, idle periods), <see cref="AppName"/> (one cache
/// per app), <see cref="InvocationId"/> (which instance runs it), <see cref="BlobName"/> (the key), <see cref="ETag"/>
/// (a changed ETag on a read means someone outside the app wrote the blob), <see cref="BlobBytes"/> (rows without a
/// size are skipped) and <see cref="Read"/>/<see cref="Write"/>; region, user and blob type are carried through only.
/// </summary>
public static class TraceColumns
{
    /// <summary>Milliseconds since the Unix epoch.</summary>
    public const string Timestamp = "Timestamp";

    /// <summary>The anonymised region.</summary>
    public const string Region = "AnonRegion";

    /// <summary>The anonymised user.</summary>
    public const string UserId = "AnonUserId";

    /// <summary>The anonymised application.</summary>
    public const string AppName = "AnonAppName";

    /// <summary>The anonymised invocation.</summary>
    public const string InvocationId = "AnonFunctionInvocationId";

    /// <summary>The anonymised blob name.</summary>
    public const string BlobName = "AnonBlobName";

    /// <summary>The blob type.</summary>
    public const string BlobType = "BlobType";

    /// <summary>The anonymised ETag.</summary>
    public const string ETag = "AnonBlobETag";

    /// <summary>The blob size in bytes (a float; may be NaN).</summary>
    public const string BlobBytes = "BlobBytes";

    /// <summary>Whether the access read the blob.</summary>
    public const string Read = "Read";

    /// <summary>Whether the access wrote the blob.</summary>
    public const string Write = "Write";

    /// <summary>All columns in file order.</summary>
    public static IReadOnlyList<string> All { get; } =
        [Timestamp, Region, UserId, AppName, InvocationId, BlobName, BlobType, ETag, BlobBytes, Read, Write];
}
