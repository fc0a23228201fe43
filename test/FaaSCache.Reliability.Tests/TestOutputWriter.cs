namespace FaaSCache.Reliability.Tests;

/// <summary>A <see cref="TextWriter"/> that writes whole lines to the test output (the scenarios log through a TextWriter).</summary>
internal sealed class TestOutputWriter(ITestOutputHelper output) : TextWriter
{
    private readonly StringBuilder _line = new();
    private readonly Lock _lock = new();

    public override Encoding Encoding => Encoding.UTF8;

    public override void Write(char value)
    {
        lock (_lock)
        {
            if (value == '\n')
            {
                Flush();
            }
            else if (value != '\r')
            {
                _line.Append(value);
            }
        }
    }

    public override void Flush()
    {
        lock (_lock)
        {
            try
            {
                output.WriteLine(_line.ToString());
            }
            catch (InvalidOperationException)
            {
                // The test has ended: a late line from a background client goes nowhere.
            }

            _line.Clear();
        }
    }
}
