using FaaSCache.Security.Logging;
using Microsoft.Extensions.Logging;

namespace FaaSCache.Host.Tests.Security;

/// <summary>No secret in a log line: what the redactor takes out, and that a logger behind it never sees the secret.</summary>
[Trait("Category", "Unit")]
public sealed class SecretRedactorTests
{
    private const string Key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

    [Theory]
    [InlineData("Proxying to http://127.0.0.1:10000/devstoreaccount1/c/b?sv=2025-11-05&sr=b&sig=abc%2Bdef%3D&sp=r HTTP/1.1", "sig=REDACTED&sp=r")]
    [InlineData("GET /api/keyed?code=AbCdEfGhIjKlMnOp== 401", "code=REDACTED 401")]
    [InlineData("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=abc/def==;BlobEndpoint=http://x", "AccountKey=REDACTED;BlobEndpoint")]
    [InlineData("BlobEndpoint=https://a.blob.core.windows.net;SharedAccessSignature=sv=2025&sig=xyz", "SharedAccessSignature=REDACTED")]
    [InlineData("Authorization: SharedKey devstoreaccount1:PCv4IkGUSzW0EOpHwD8ocGZnuoDmg2D8CwqwgcDm9n0=", "SharedKey devstoreaccount1:REDACTED")]
    [InlineData("Authorization: Bearer eyJ0eXAiOiJKV1QiLCJhbGciOi.abc.def", "Bearer REDACTED")]
    [InlineData("headers {\"x-functions-key\": \"K3yK3yK3yK3y\"}", "\"x-functions-key\": \"REDACTED\"")]
    public void Each_kind_of_secret_is_taken_out_and_the_text_around_it_kept(string text, string expected)
    {
        string redacted = new SecretRedactor().Redact(text);

        Assert.Contains(expected, redacted, StringComparison.Ordinal);
    }

    [Fact]
    public void A_registered_key_is_taken_out_raw_and_percent_encoded_and_short_values_are_not_registered()
    {
        var redactor = new SecretRedactor();
        redactor.Add([Key, "short", null]);

        string redacted = redactor.Redact($"key {Key} or {Uri.EscapeDataString(Key)}; a short word stays");

        Assert.DoesNotContain(Key, redacted, StringComparison.Ordinal);
        Assert.DoesNotContain(Uri.EscapeDataString(Key), redacted, StringComparison.OrdinalIgnoreCase);
        Assert.Contains("a short word stays", redacted, StringComparison.Ordinal);
    }

    [Fact]
    public void A_logger_behind_the_redactor_sees_neither_the_message_nor_the_exception_with_the_secret()
    {
        var inner = new Capture();
        var redactor = new SecretRedactor();
        redactor.Add([Key]);
        using var provider = new RedactingLoggerProvider(inner, redactor);
        ILogger logger = provider.CreateLogger("Yarp.ReverseProxy.Forwarder.HttpForwarder");

        logger.LogInformation("Proxying to {Url}", "http://h/a/c/b?sig=SECRETSIG&sp=r");
        logger.LogError(new InvalidOperationException($"failed with key {Key}"), "Forwarding failed");

        Assert.Equal(2, inner.Lines.Count);
        Assert.All(inner.Lines, l => Assert.DoesNotContain("SECRETSIG", l, StringComparison.Ordinal));
        Assert.All(inner.Lines, l => Assert.DoesNotContain(Key, l, StringComparison.Ordinal));
        Assert.Contains("failed with key REDACTED", inner.Lines[1], StringComparison.Ordinal);
    }

    private sealed class Capture : ILoggerProvider, ILogger
    {
        public List<string> Lines { get; } = [];

        public ILogger CreateLogger(string categoryName) => this;

        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => true;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
            => Lines.Add(formatter(state, exception) + (exception is null ? string.Empty : exception.ToString()));

        public void Dispose()
        {
        }
    }
}
