using Microsoft.Extensions.Logging;
using Xunit.Abstractions;

namespace FaaSCache.ScaleController.Tests;

/// <summary>Sends the controller's log lines to the test's output (shown when a test fails).</summary>
internal sealed class TestOutputLoggerProvider(ITestOutputHelper output) : ILoggerProvider
{
    public ILogger CreateLogger(string categoryName) => new Logger(output, categoryName[(categoryName.LastIndexOf('.') + 1)..]);

    public void Dispose()
    {
    }

    private sealed class Logger(ITestOutputHelper output, string category) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => logLevel >= LogLevel.Information;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (!IsEnabled(logLevel) || category.StartsWith("Http", StringComparison.Ordinal))
            {
                return;
            }

            try
            {
                output.WriteLine($"{DateTime.UtcNow:HH:mm:ss.fff} {logLevel} {category}: {formatter(state, exception)}{(exception is null ? "" : " " + exception)}");
            }
            catch (InvalidOperationException)
            {
                // The test has ended; its output is closed.
            }
        }
    }
}
