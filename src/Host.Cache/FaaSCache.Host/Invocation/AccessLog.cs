using System.Threading.Channels;

namespace FaaSCache.Host.Invocation;

/// <summary>
/// <c>--access-log FILE</c>: every blob input and output of every finished invocation, one row each, in the Azure blob
/// trace's CSV columns (the ones <c>faascache what-if --log</c> and the simulator read), with the cache on or off, so an
/// app can be observed before the cache is turned on. Rows are appended as invocations end (a header first when the
/// file is new or empty) by a background writer, so an invocation never waits on the file; disposing drains what is
/// queued. A comma in a name is written as <c>%2C</c>, since the trace's CSV has no quoting.
/// </summary>
public sealed class AccessLog : IDisposable
{
    /// <summary>The header, the trace's columns in their order.</summary>
    public const string Header = "Timestamp,AnonRegion,AnonUserId,AnonAppName,AnonFunctionInvocationId,AnonBlobName,BlobType,AnonBlobETag,BlobBytes,Read,Write";

    private readonly Channel<string> _rows = Channel.CreateUnbounded<string>(new UnboundedChannelOptions { SingleReader = true });
    private readonly StreamWriter _writer;
    private readonly Task _drain;
    private readonly string _app;

    /// <summary>Initializes a new instance of the <see cref="AccessLog"/> class, opening <paramref name="path"/> to append.</summary>
    /// <param name="path">The log file (created with its folder when missing).</param>
    /// <param name="appName">The app's name (the AnonAppName column).</param>
    /// <exception cref="IOException">The file cannot be opened for appending (the message names it).</exception>
    public AccessLog(string path, string appName)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        Path = System.IO.Path.GetFullPath(path);
        _app = Clean(appName);
        try
        {
            string? folder = System.IO.Path.GetDirectoryName(Path);
            if (!string.IsNullOrEmpty(folder))
            {
                Directory.CreateDirectory(folder);
            }

            var stream = new FileStream(Path, FileMode.Append, FileAccess.Write, FileShare.Read);
            _writer = new StreamWriter(stream, new UTF8Encoding(encoderShouldEmitUTF8Identifier: false)) { NewLine = "\n" };
            if (stream.Length == 0)
            {
                _writer.WriteLine(Header);
                _writer.Flush();
            }
        }
        catch (Exception e) when (e is UnauthorizedAccessException or IOException)
        {
            throw new IOException($"--access-log '{path}' cannot be opened for appending: {e.Message}", e);
        }

        _drain = Task.Run(DrainAsync);
    }

    /// <summary>Gets the full path of the log.</summary>
    public string Path { get; }

    /// <summary>Appends the accesses of one finished invocation: its inputs as reads, then its outputs as writes.</summary>
    /// <param name="record">The invocation.</param>
    public void Append(InvocationRecord record)
    {
        ArgumentNullException.ThrowIfNull(record);
        if (record.Inputs.Count == 0 && record.Outputs.Count == 0)
        {
            return;
        }

        var rows = new StringBuilder();
        string at = record.StartedAt.ToUnixTimeMilliseconds().ToString(CultureInfo.InvariantCulture);
        string invocation = Clean(record.InvocationId);
        foreach (InputRecord input in record.Inputs.Where(i => i.Source is not ("missing" or "deferred")))
        {
            Row(rows, at, invocation, input.Key, input.Version, input.Bytes, read: true);
        }

        foreach (OutputRecord output in record.Outputs)
        {
            Row(rows, at, invocation, output.Key, output.Version, output.Bytes, read: false);
        }

        if (rows.Length == 0)
        {
            return;
        }

        _rows.Writer.TryWrite(rows.ToString());
    }

    /// <summary>Writes what is queued, then closes the file.</summary>
    public void Dispose()
    {
        if (_rows.Writer.TryComplete())
        {
            try
            {
                _drain.Wait(TimeSpan.FromSeconds(10));
                _writer.Dispose();
            }
            catch (Exception e) when (e is AggregateException or IOException)
            {
                Console.Error.WriteLine($"--access-log '{Path}': the last rows could not be written: {e.GetBaseException().Message}");
            }
        }
    }

    /// <summary>Appends rows as they come; flushes whenever the queue is empty, so the file trails the invocations by little.</summary>
    private async Task DrainAsync()
    {
        while (await _rows.Reader.WaitToReadAsync().ConfigureAwait(false))
        {
            while (_rows.Reader.TryRead(out string? rows))
            {
                await _writer.WriteAsync(rows).ConfigureAwait(false);
            }

            await _writer.FlushAsync().ConfigureAwait(false);
        }
    }

    private static string Clean(string? text) => (text ?? string.Empty).Replace(",", "%2C", StringComparison.Ordinal).Replace("\n", " ", StringComparison.Ordinal).Replace("\r", " ", StringComparison.Ordinal);

    private void Row(StringBuilder rows, string at, string invocation, string key, string? version, long bytes, bool read)
        => rows.Append(at).Append(",local,local,").Append(_app).Append(',').Append(invocation).Append(',').Append(Clean(key))
            .Append(",BlockBlob,").Append(Clean(version)).Append(',').Append(bytes.ToString(CultureInfo.InvariantCulture))
            .Append(read ? ",1,0\n" : ",0,1\n");
}
