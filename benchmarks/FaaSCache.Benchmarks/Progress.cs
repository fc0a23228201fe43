namespace FaaSCache.Benchmarks;

/// <summary>A benchmark's progress on its output: part of a line, shown at once (the output may be a pipe or a file).</summary>
internal static class Progress
{
    /// <summary>Writes <paramref name="text"/> (no newline) and flushes.</summary>
    public static async Task ShowAsync(this TextWriter output, string text, CancellationToken cancellationToken)
    {
        output.Write(text);
        await output.FlushAsync(cancellationToken);
    }
}
