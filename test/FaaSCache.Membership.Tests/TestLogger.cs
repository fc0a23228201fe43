using Microsoft.Extensions.Logging;

namespace FaaSCache.Membership.Tests;

/// <summary>Writes log lines to the test's output (shown when a test fails) and keeps them for assertions.</summary>
internal sealed class TestLogger<T>(ITestOutputHelper output, string name) : ILogger<T>
{
    private readonly Lock _gate = new();
    private readonly List<string> _lines = [];

    public IReadOnlyList<string> Lines
    {
        get
        {
            lock (_gate)
            {
                return [.. _lines];
            }
        }
    }

    public IDisposable? BeginScope<TState>(TState state)
        where TState : notnull => null;

    public bool IsEnabled(LogLevel logLevel) => logLevel >= LogLevel.Information;

    public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
    {
        if (!IsEnabled(logLevel))
        {
            return;
        }

        string line = $"{DateTime.UtcNow:HH:mm:ss.fff} [{name}] {logLevel}: {formatter(state, exception)}";
        lock (_gate)
        {
            _lines.Add(line);
        }

        try
        {
            output.WriteLine(line);
        }
        catch (InvalidOperationException)
        {
            // The test has finished; a late line from a background loop has nowhere to go.
        }
    }
}
