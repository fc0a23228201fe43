using Microsoft.Extensions.Logging;

namespace FaaSCache.ScaleController.Tests;

/// <summary>Sends the controller's log lines to the test's output (shown when a test fails).</summary>
internal sealed class TestOutputLoggerProvider(ITestOutputHelper output) : ILoggerProvider
{
    public ILogger CreateLogger(string categoryName) => new Logger(output, categoryName.StartsWith("FaaSCache", StringComparison.Ordinal) ? categoryName[(categoryName.LastIndexOf('.') + 1)..] : null);

    public void Dispose()
    {
    }

    // Only the controller's own categories (null: ASP.NET Core's per-request lines, left out).
    private sealed class Logger(ITestOutputHelper output, string? category) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(LogLevel logLevel) => category is not null ? logLevel >= LogLevel.Information : logLevel >= LogLevel.Warning;

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (!IsEnabled(logLevel))
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
