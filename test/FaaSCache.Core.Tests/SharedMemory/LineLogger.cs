using Microsoft.Extensions.Logging;

namespace FaaSCache.Core.Tests.SharedMemory;

/// <summary>Keeps the warnings a store logs, formatted, for tests that assert what start-up said.</summary>
internal sealed class LineLogger : ILogger
{
    public List<string> Warnings { get; } = [];

    public IDisposable? BeginScope<TState>(TState state)
        where TState : notnull => null;

    public bool IsEnabled(LogLevel logLevel) => true;

    public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
    {
        if (logLevel == LogLevel.Warning)
        {
            Warnings.Add(formatter(state, exception));
        }
    }
}
