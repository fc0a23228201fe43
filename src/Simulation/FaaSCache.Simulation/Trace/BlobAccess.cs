namespace FaaSCache.Simulation.Trace;

/// <summary>
/// One row of the Azure Functions blob access trace 2020 (the columns of <see cref="TraceColumns"/>), as read from
/// or written to a trace file.
/// </summary>
/// <param name="TimestampMs">Milliseconds since the Unix epoch (<c>Timestamp</c>).</param>
/// <param name="Region">The anonymised region (<c>AnonRegion</c>).</param>
/// <param name="UserId">The anonymised user (<c>AnonUserId</c>).</param>
/// <param name="AppName">The anonymised application (<c>AnonAppName</c>): the unit the simulator groups by.</param>
/// <param name="InvocationId">The anonymised function invocation (<c>AnonFunctionInvocationId</c>).</param>
/// <param name="BlobName">The anonymised blob (<c>AnonBlobName</c>): the cache key.</param>
/// <param name="BlobType">The blob type (<c>BlobType</c>).</param>
/// <param name="ETag">The anonymised ETag (<c>AnonBlobETag</c>): the version.</param>
/// <param name="BlobBytes">The blob's size (<c>BlobBytes</c>; NaN when the trace does not know it).</param>
/// <param name="IsRead">The <c>Read</c> flag.</param>
/// <param name="IsWrite">The <c>Write</c> flag.</param>
public readonly record struct BlobAccess(
    long TimestampMs,
    string Region,
    string UserId,
    string AppName,
    string InvocationId,
    string BlobName,
    string BlobType,
    string ETag,
    double BlobBytes,
    bool IsRead,
    bool IsWrite);
