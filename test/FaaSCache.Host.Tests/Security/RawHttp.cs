using System.Net.Sockets;

namespace FaaSCache.Host.Tests.Security;

/// <summary>One HTTP/1.1 request exactly as it goes on the wire: the target is written as given, never canonicalized.</summary>
/// <param name="Method">GET, HEAD, PUT or DELETE.</param>
/// <param name="Target">The request target, path and query, already percent-encoded as it is to be sent.</param>
/// <param name="Headers">The headers in the order they are sent (no Host, Connection: both are added per server).</param>
/// <param name="Body">The body (Content-Length is among <paramref name="Headers"/> when there is one).</param>
internal sealed record RawRequest(string Method, string Target, IReadOnlyList<KeyValuePair<string, string>> Headers, byte[] Body)
{
    public string Header(string name) =>
        Headers.FirstOrDefault(h => string.Equals(h.Key, name, StringComparison.OrdinalIgnoreCase)).Value ?? string.Empty;
}

/// <summary>What a server answered: the status, <c>x-ms-error-code</c>, and the error body for the report.</summary>
internal sealed record RawAnswer(int Status, string? ErrorCode, string Body)
{
    public override string ToString() => $"{Status} {ErrorCode ?? "(no x-ms-error-code)"}";

    public bool Is(int status, string code) => Status == status && string.Equals(ErrorCode, code, StringComparison.Ordinal);
}

/// <summary>
/// A raw HTTP/1.1 client over a socket: System.Uri and HttpClient fold '.'/'..' segments and re-escape targets, and a
/// differential test must send both servers the very bytes an attacker would.
/// </summary>
internal static class RawHttp
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(20);

    public static async Task<RawAnswer> SendAsync(IPEndPoint server, RawRequest request)
    {
        using var cancel = new CancellationTokenSource(Timeout);
        using var client = new TcpClient();
        await client.ConnectAsync(server, cancel.Token);
        NetworkStream stream = client.GetStream();

        var head = new StringBuilder();
        head.Append(request.Method).Append(' ').Append(request.Target).Append(" HTTP/1.1\r\n");
        head.Append("Host: ").Append(server).Append("\r\n");
        foreach ((string name, string value) in request.Headers)
        {
            head.Append(name).Append(": ").Append(value).Append("\r\n");
        }

        // One request per connection: reading to the end of the stream is then the whole answer.
        head.Append("Connection: close\r\n\r\n");
        await stream.WriteAsync(Encoding.Latin1.GetBytes(head.ToString()), cancel.Token);
        await stream.WriteAsync(request.Body, cancel.Token);

        var received = new MemoryStream();
        await stream.CopyToAsync(received, cancel.Token);
        return Parse(received.ToArray(), request.Method);
    }

    private static RawAnswer Parse(byte[] response, string method)
    {
        int end = response.AsSpan().IndexOf("\r\n\r\n"u8);
        if (end < 0)
        {
            return new RawAnswer(0, null, $"(no complete response head: {Encoding.Latin1.GetString(response)})");
        }

        string[] lines = Encoding.Latin1.GetString(response, 0, end).Split("\r\n");
        int status = int.Parse(lines[0].Split(' ', 3)[1], CultureInfo.InvariantCulture);
        var headers = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
        foreach (string line in lines.Skip(1))
        {
            int colon = line.IndexOf(':', StringComparison.Ordinal);
            if (colon > 0)
            {
                headers[line[..colon].Trim()] = line[(colon + 1)..].Trim();
            }
        }

        byte[] body = response[(end + 4)..];
        if (headers.TryGetValue("Transfer-Encoding", out string? encoding) && encoding.Contains("chunked", StringComparison.OrdinalIgnoreCase))
        {
            body = Dechunk(body);
        }

        // Only error bodies are kept, for the report; a HEAD answer never has one.
        string text = status >= 400 && !string.Equals(method, "HEAD", StringComparison.Ordinal) ? Encoding.UTF8.GetString(body) : string.Empty;
        return new RawAnswer(status, headers.GetValueOrDefault("x-ms-error-code"), text);
    }

    private static byte[] Dechunk(byte[] body)
    {
        var output = new MemoryStream();
        int at = 0;
        while (at < body.Length)
        {
            int lineEnd = body.AsSpan(at).IndexOf("\r\n"u8);
            if (lineEnd < 0)
            {
                break;
            }

            string sizeText = Encoding.Latin1.GetString(body, at, lineEnd).Split(';')[0].Trim();
            int size = int.Parse(sizeText, NumberStyles.HexNumber, CultureInfo.InvariantCulture);
            at += lineEnd + 2;
            if (size == 0)
            {
                break;
            }

            output.Write(body, at, Math.Min(size, body.Length - at));
            at += size + 2;
        }

        return output.ToArray();
    }
}
