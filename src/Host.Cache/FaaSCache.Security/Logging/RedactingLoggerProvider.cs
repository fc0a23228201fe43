using Microsoft.Extensions.Logging;

namespace FaaSCache.Security.Logging;

/// <summary>
/// A logger provider in front of another (the console, ...): every message, and the text of its exception, goes through
/// <see cref="SecretRedactor"/> before the inner provider sees it, whichever category wrote it (YARP's forwarder logs
/// the full URL of each request it forwards, SAS signature included).
/// </summary>
public sealed class RedactingLoggerProvider(ILoggerProvider inner, SecretRedactor redactor) : ILoggerProvider, ISupportExternalScope
{
    /// <inheritdoc />
    public ILogger CreateLogger(string categoryName) => new RedactingLogger(inner.CreateLogger(categoryName), redactor);

    /// <inheritdoc />
    public void SetScopeProvider(IExternalScopeProvider scopeProvider)
    {
        if (inner is ISupportExternalScope scoped)
        {
            scoped.SetScopeProvider(scopeProvider);
        }
    }

    /// <inheritdoc />
    public void Dispose() => inner.Dispose();

    private sealed class RedactingLogger(ILogger inner, SecretRedactor redactor) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => inner.BeginScope(state);

        public bool IsEnabled(LogLevel logLevel) => inner.IsEnabled(logLevel);

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (!inner.IsEnabled(logLevel))
            {
                return;
            }

            string message = redactor.Redact(formatter(state, exception));
            // The exception goes as text (its message may hold a URL): appended as the console would print it.
            string text = exception is null ? message : message + Environment.NewLine + redactor.Redact(exception.ToString());
            inner.Log(logLevel, eventId, text, null, static (s, _) => s);
        }
    }
}
