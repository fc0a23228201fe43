namespace FaaSCache.Host.Triggers;

/// <summary>
/// Timer triggers: each timer-triggered function runs at its schedule's occurrences (UTC) while the host runs, and once
/// at start-up when its binding says <c>runOnStartup</c>. An occurrence that comes while the previous run is still going
/// waits for it and is marked past due, as the Functions host does. With several instances each runs its timers (the
/// Functions host's singleton lock across instances is not modelled).
/// </summary>
public sealed class TimerTriggerService(FunctionApp app, FunctionInvoker invoker, TimeProvider time, ILogger<TimerTriggerService> logger, Start.HostLifecycle? lifecycle = null) : PerFunctionTriggerService(app, lifecycle)
{
    /// <inheritdoc />
    protected override bool Handles(FunctionDefinition function) => function.Trigger.IsTimerTrigger;

    /// <inheritdoc />
    protected override async Task ListenAsync(FunctionDefinition function)
    {
        TimerSchedule schedule = TimerSchedule.Parse(function.Trigger.Property("schedule")!);
        bool runOnStartup = function.Trigger.Raw.FirstOrDefault(p => string.Equals(p.Key, "runOnStartup", StringComparison.OrdinalIgnoreCase)).Value
            is System.Text.Json.Nodes.JsonValue v && (v.TryGetValue(out bool b) ? b : v.TryGetValue(out string? s) && bool.TryParse(s, out bool parsed) && parsed);
        DateTimeOffset? last = null;
        DateTimeOffset due = runOnStartup ? time.GetUtcNow() : schedule.Next(time.GetUtcNow());
        while (!Stopping.IsCancellationRequested)
        {
            try
            {
                TimeSpan wait = due - time.GetUtcNow();
                if (wait > TimeSpan.Zero)
                {
                    await Task.Delay(wait, time, Stopping).ConfigureAwait(false);
                }

                DateTimeOffset now = time.GetUtcNow();
                DateTimeOffset next = schedule.Next(now);
                bool pastDue = now - due > TimeSpan.FromSeconds(1);
                logger.LogInformation("Executing '{Function}' (reason: timer due at {Due:O}{PastDue})", function.Name, due, pastDue ? ", past due" : string.Empty);
                await invoker.InvokeAsync(function, new TimerTriggerEvent(due, next, last, pastDue), Stopping).ConfigureAwait(false);
                last = now;
                due = next;
            }
            catch (OperationCanceledException) when (Stopping.IsCancellationRequested)
            {
                break;
            }
            catch (Exception e)
            {
                logger.LogError(e, "Timer-triggered '{Function}' failed: {Message}", function.Name, e.Message);
                due = schedule.Next(time.GetUtcNow());
            }
        }
    }
}
