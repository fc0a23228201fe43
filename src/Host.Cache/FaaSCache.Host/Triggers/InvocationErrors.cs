namespace FaaSCache.Host.Triggers;

/// <summary>
/// The one map from what an invocation threw to what its HTTP caller gets: the status by the exception's type, and the
/// body <c>{"error": "&lt;message&gt;"}</c> (cut at <see cref="MaxErrorLength"/> characters). An exception of no type
/// listed here is not the invocation's answer and goes on up.
/// </summary>
internal static class InvocationErrors
{
    /// <summary>The longest error message a body carries.</summary>
    public const int MaxErrorLength = 4000;

    // The first type the exception is gives the status, as a catch ladder would: a WorkerStartupFailedException is a
    // WorkerFailedException, so it comes first.
    private static readonly (Type Type, int Status)[] Statuses =
    [
        // No worker for this language, and none coming: a service that is unavailable.
        (typeof(WorkerStartupFailedException), StatusCodes.Status503ServiceUnavailable),

        // Storage (or the membership it holds) unreachable: the binding's read or write was not done; a retry may succeed.
        (typeof(StorageUnavailableException), StatusCodes.Status503ServiceUnavailable),
        (typeof(MembershipLeaseLostException), StatusCodes.Status503ServiceUnavailable),

        // The function, its worker, its bindings or the cache under them failed.
        (typeof(FunctionInvocationException), StatusCodes.Status500InternalServerError),
        (typeof(WriteOutcomeUnknownException), StatusCodes.Status500InternalServerError),
        (typeof(WorkerFailedException), StatusCodes.Status500InternalServerError),
        (typeof(BindingException), StatusCodes.Status500InternalServerError),
        (typeof(BlobNotFoundException), StatusCodes.Status500InternalServerError),
        (typeof(CacheCapacityException), StatusCodes.Status500InternalServerError),
        (typeof(SharedMemoryException), StatusCodes.Status500InternalServerError),
    ];

    /// <summary>The status an invocation that threw <paramref name="error"/> answers with; null when it is not mapped.</summary>
    public static int? StatusOf(Exception error)
    {
        foreach ((Type type, int status) in Statuses)
        {
            if (type.IsInstanceOfType(error))
            {
                return status;
            }
        }

        return null;
    }

    /// <summary>Writes <paramref name="status"/> and the body that carries <paramref name="message"/>.</summary>
    public static async Task WriteAsync(HttpContext context, string message, int status = StatusCodes.Status500InternalServerError)
    {
        context.Response.StatusCode = status;
        context.Response.ContentType = "application/json";
        string trimmed = message.Length > MaxErrorLength ? message[..MaxErrorLength] : message;
        await context.Response.WriteAsync(JsonSerializer.Serialize(new { error = trimmed }), context.RequestAborted);
    }
}
