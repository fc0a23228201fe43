namespace FaaSCache.ScaleController.Instances;

/// <summary>The last lines a process printed (a bounded ring), to explain a failed start.</summary>
public sealed class OutputTail(int lines)
{
    private readonly Queue<string> _lines = new();
    private readonly Lock _gate = new();

    /// <summary>Appends one line (null, the end of a stream, is ignored).</summary>
    public void Add(string? line)
    {
        if (line is null)
        {
            return;
        }

        lock (_gate)
        {
            _lines.Enqueue(line);
            while (_lines.Count > lines)
            {
                _lines.Dequeue();
            }
        }
    }

    /// <inheritdoc />
    public override string ToString()
    {
        lock (_gate)
        {
            return string.Join(Environment.NewLine, _lines);
        }
    }
}
