using System.Net;
using System.Text.Json;
using Microsoft.Azure.Functions.Worker;
using Microsoft.Azure.Functions.Worker.Http;

namespace BenchDotnetIsolated;

/// <summary>
/// The invoke benchmark's functions (benchmarks/apps/node) in the C# isolated worker model: the same routes, blob and
/// JSON answers.
/// </summary>
public static class Functions
{
    // Null members are left out, as JSON.stringify leaves out undefined (an empty blob has no first or last byte).
    private static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web) { DefaultIgnoreCondition = System.Text.Json.Serialization.JsonIgnoreCondition.WhenWritingNull };

    /// <summary>
    /// GET /api/ping/{name}: the same request and answer as Touch, without a blob input. The benchmark's baseline: what an
    /// HTTP invocation costs when no blob is bound.
    /// </summary>
    [Function("Ping")]
    public static Task<HttpResponseData> Ping(
        [HttpTrigger(AuthorizationLevel.Anonymous, "get", Route = "ping/{name}")] HttpRequestData req,
        string name)
        => AnswerAsync(req, HttpStatusCode.OK, new { name });

    /// <summary>
    /// GET /api/touch/{name}: the length and the first and last byte of blob bench/{name}, which arrives as a byte[]
    /// (the bytes the host sent; the isolated worker does not read shared memory).
    /// </summary>
    [Function("Touch")]
    public static Task<HttpResponseData> Touch(
        [HttpTrigger(AuthorizationLevel.Anonymous, "get", Route = "touch/{name}")] HttpRequestData req,
        [BlobInput("bench/{name}", Connection = "AzureWebJobsStorage")] byte[]? blob)
        => blob is null
            ? AnswerAsync(req, HttpStatusCode.NotFound, new { error = "no such blob" })
            : AnswerAsync(req, HttpStatusCode.OK, new { length = blob.Length, first = blob.Length > 0 ? blob[0] : (int?)null, last = blob.Length > 0 ? blob[^1] : (int?)null });

    private static async Task<HttpResponseData> AnswerAsync<T>(HttpRequestData req, HttpStatusCode status, T body)
    {
        ArgumentNullException.ThrowIfNull(req);
        HttpResponseData response = req.CreateResponse(status);
        response.Headers.Add("content-type", "application/json");
        await response.WriteStringAsync(JsonSerializer.Serialize(body, Json)).ConfigureAwait(false);
        return response;
    }
}
