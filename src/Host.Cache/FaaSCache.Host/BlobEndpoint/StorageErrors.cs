using System.Security;

namespace FaaSCache.Host.BlobEndpoint;

/// <summary>
/// Errors in the Blob service's own shape, so that an SDK raises exactly what it raises against storage: an XML body
/// <c>&lt;Error&gt;&lt;Code&gt;</c> with <c>x-ms-error-code</c>, and for HEAD the header alone (no body, no XML
/// content type: an empty XML body breaks the .NET SDK's error parser).
/// </summary>
public static class StorageErrors
{
    /// <summary>Writes an error answer.</summary>
    /// <param name="context">The request.</param>
    /// <param name="status">The HTTP status.</param>
    /// <param name="code">The storage error code (<c>BlobNotFound</c>, <c>InvalidRange</c>, ...).</param>
    /// <param name="message">What was wrong, in words.</param>
    /// <param name="extra">Extra child elements (<c>HeaderName</c>, <c>AuthenticationErrorDetail</c>, ...).</param>
    public static async Task WriteAsync(HttpContext context, int status, string code, string message, IEnumerable<KeyValuePair<string, string>>? extra = null)
    {
        ArgumentNullException.ThrowIfNull(context);
        HttpResponse response = context.Response;
        string requestId = BlobHeaders.StampCommon(context);
        response.StatusCode = status;
        response.Headers["x-ms-error-code"] = code;
        if (HttpMethods.IsHead(context.Request.Method) || status == StatusCodes.Status304NotModified)
        {
            response.ContentLength = 0;
            return;
        }

        var body = new System.Text.StringBuilder();
        body.Append("<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>").Append(code).Append("</Code><Message>")
            .Append(SecurityElement.Escape(message)).Append("\nRequestId:").Append(requestId).Append("\nTime:")
            .Append(DateTime.UtcNow.ToString("yyyy-MM-dd'T'HH:mm:ss.fffffff'Z'", CultureInfo.InvariantCulture)).Append("</Message>");
        foreach ((string name, string value) in extra ?? [])
        {
            body.Append('<').Append(name).Append('>').Append(SecurityElement.Escape(value)).Append("</").Append(name).Append('>');
        }

        body.Append("</Error>");
        byte[] bytes = System.Text.Encoding.UTF8.GetBytes(body.ToString());
        response.ContentType = "application/xml";
        response.ContentLength = bytes.Length;
        await response.Body.WriteAsync(bytes, context.RequestAborted).ConfigureAwait(false);
    }

    /// <summary>400 <c>InvalidHeaderValue</c> naming the header and the value.</summary>
    public static Task InvalidHeaderAsync(HttpContext context, string header, string? value, string why)
        => WriteAsync(context, 400, "InvalidHeaderValue", $"The value for one of the HTTP headers is not in the correct format: {header}: {why}.",
            [new("HeaderName", header), new("HeaderValue", value ?? string.Empty)]);
}
