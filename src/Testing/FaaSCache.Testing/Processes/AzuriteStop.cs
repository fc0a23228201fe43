namespace FaaSCache.Testing;

/// <summary>How <see cref="AzuriteServer.StopAsync"/> went: which process, how long it took, whether SIGTERM was enough.</summary>
/// <param name="ProcessId">The pid of the Azurite process that was stopped.</param>
/// <param name="Took">From SIGTERM to the process's exit.</param>
/// <param name="Killed">True when it did not exit within <see cref="AzuriteServer.StopTimeout"/> of SIGTERM and was SIGKILLed.</param>
/// <param name="ExitCode">Its exit code.</param>
public sealed record AzuriteStop(int ProcessId, TimeSpan Took, bool Killed, int? ExitCode)
{
    /// <inheritdoc />
    public override string ToString() => Killed
        ? string.Create(CultureInfo.InvariantCulture, $"Azurite (pid {ProcessId}) did not exit within {AzuriteServer.StopTimeout.TotalSeconds:0} s of SIGTERM and was SIGKILLed (metadata of the last 5 s may be lost)")
        : string.Create(CultureInfo.InvariantCulture, $"Azurite (pid {ProcessId}) exited {Took.TotalMilliseconds:0} ms after SIGTERM (code {ExitCode})");
}
