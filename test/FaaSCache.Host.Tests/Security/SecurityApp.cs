using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.RegularExpressions;
using FaaSCache.Host.Tests.EndToEnd;

namespace FaaSCache.Host.Tests.Security;

/// <summary>
/// The app the security tests attack: a Python v2 app with HTTP triggers at each authLevel (<c>open</c> anonymous,
/// <c>keyed</c> and <c>keyed2</c> function, <c>adminonly</c> admin), one of them reading a blob through a binding.
/// </summary>
internal static partial class SecurityApp
{
    public static FunctionAppFolder Build(string container) => PipelineApp.NewBuilder("faascache-secapp", "python")
        .WithHostJson("""
            {
              "version": "2.0",
              "logging": { "logLevel": { "default": "Debug", "Yarp": "Debug" } },
              "extensions": { "faasCache": { "consistency": "strong", "persist": "sync" } }
            }
            """)
        .WithFile("function_app.py", $$"""
            import azure.functions as func

            app = func.FunctionApp()


            @app.function_name("Open")
            @app.route(route="open", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
            @app.blob_input(arg_name="data", path="{{container}}/open.txt", connection="AzureWebJobsStorage", data_type=func.DataType.BINARY)
            def open_(req: func.HttpRequest, data: bytes) -> func.HttpResponse:
                return func.HttpResponse(data)


            @app.function_name("Keyed")
            @app.route(route="keyed", methods=["GET"], auth_level=func.AuthLevel.FUNCTION)
            def keyed(req: func.HttpRequest) -> func.HttpResponse:
                return func.HttpResponse("keyed")


            @app.function_name("Keyed2")
            @app.route(route="keyed2", methods=["GET"])
            def keyed2(req: func.HttpRequest) -> func.HttpResponse:
                return func.HttpResponse("keyed2")


            @app.function_name("AdminOnly")
            @app.route(route="adminonly", methods=["GET"], auth_level=func.AuthLevel.ADMIN)
            def admin_only(req: func.HttpRequest) -> func.HttpResponse:
                return func.HttpResponse("admin")
            """)
        .Build();

    /// <summary>A port from the banner line that starts with <paramref name="label"/> (e.g. "Worker gRPC", "SDK endpoint").</summary>
    public static int BannerPort(string output, string label)
    {
        Match m = Regex.Match(output, "^  " + Regex.Escape(label) + @"\s+http://[^:/]+:(?<port>\d+)/", RegexOptions.Multiline);
        Assert.True(m.Success, $"no '{label}' line with a port in the host's banner:{Environment.NewLine}{output}");
        return int.Parse(m.Groups["port"].Value, System.Globalization.CultureInfo.InvariantCulture);
    }

    /// <summary>
    /// Sends one HTTP/1.1 request exactly as written (the target is not normalized, so '..' stays '..'), and returns the
    /// status, the headers and the body (read to Content-Length).
    /// </summary>
    public static async Task<RawResponse> SendRawAsync(int port, string method, string target, IEnumerable<(string Name, string Value)> headers, byte[]? body = null)
    {
        using var tcp = new TcpClient();
        await tcp.ConnectAsync(IPAddress.Loopback, port);
        NetworkStream stream = tcp.GetStream();
        var head = new StringBuilder();
        (string Name, string Value)[] given = [.. headers];
        head.Append(method).Append(' ').Append(target).Append(" HTTP/1.1\r\nConnection: close\r\n");
        if (!given.Any(h => h.Name.Equals("Host", StringComparison.OrdinalIgnoreCase)))
        {
            head.Append("Host: 127.0.0.1:").Append(port).Append("\r\n");
        }

        foreach ((string name, string value) in given)
        {
            head.Append(name).Append(": ").Append(value).Append("\r\n");
        }

        if (body is not null)
        {
            head.Append("Content-Length: ").Append(body.Length).Append("\r\n");
        }

        head.Append("\r\n");
        await stream.WriteAsync(Encoding.ASCII.GetBytes(head.ToString()));
        if (body is not null)
        {
            await stream.WriteAsync(body);
        }

        using var buffer = new MemoryStream();
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        await stream.CopyToAsync(buffer, cts.Token);
        string text = Encoding.UTF8.GetString(buffer.ToArray());
        int end = text.IndexOf("\r\n\r\n", StringComparison.Ordinal);
        string[] lines = text[..end].Split("\r\n");
        var parsed = lines.Skip(1).Select(l => l.Split(':', 2)).ToDictionary(p => p[0].Trim(), p => p[1].Trim(), StringComparer.OrdinalIgnoreCase);
        return new RawResponse(int.Parse(lines[0].Split(' ')[1], System.Globalization.CultureInfo.InvariantCulture), parsed, text[(end + 4)..]);
    }

    /// <summary>What <see cref="SendRawAsync"/> got back.</summary>
    public sealed record RawResponse(int Status, IReadOnlyDictionary<string, string> Headers, string Body)
    {
        public string? ErrorCode => Headers.TryGetValue("x-ms-error-code", out string? code) ? code : null;

        public override string ToString() => $"{Status} {ErrorCode} {Body}";
    }
}
