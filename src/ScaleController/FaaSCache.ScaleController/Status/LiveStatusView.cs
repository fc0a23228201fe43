using Spectre.Console;

namespace FaaSCache.ScaleController.Status;

/// <summary>
/// The interactive status (<c>--status-view</c>): a console table refreshed every second with the instances, their
/// votes and the reason for the current count, and the last decisions (Spectre.Console's <c>Live</c>).
/// </summary>
public sealed class LiveStatusView(ScaleStatusSource status, TimeProvider time) : BackgroundService
{
    private const int DecisionsShown = 8;
    private const int ReasonChars = 60;

    /// <inheritdoc />
    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        await AnsiConsole.Live(Render(status.Read())).AutoClear(false).StartAsync(async live =>
        {
            using var timer = new PeriodicTimer(TimeSpan.FromSeconds(1), time);
            try
            {
                while (await timer.WaitForNextTickAsync(stoppingToken))
                {
                    live.UpdateTarget(Render(status.Read()));
                }
            }
            catch (OperationCanceledException)
            {
                // Ctrl+C: the last frame stays on screen.
            }
        });
    }

    private static Rows Render(ScaleStatusReport s)
    {
        var header = new Markup(Markup.Escape(string.Create(
            CultureInfo.InvariantCulture,
            $"{s.App}: {s.Current} instance(s), desired {s.Desired} (min {s.MinInstances}, max {s.MaxInstances}); requests held {s.HeldRequests}, pending {s.PendingRequests}; T_Load {(s.InstanceLoadSeconds is { } t ? $"{t:0.00} s" : "not measured")}")));
        var instances = new Table().Expand().AddColumns("Instance", "State", "Pid", "HTTP", "T_Load", "In flight", "Votes");
        foreach (InstanceStatus i in s.Instances)
        {
            string votes = i.LastVotes is { } v ? string.Join("\n", v.Votes.Select(x => $"{Sign(x.Vote)} {x.Voter}: {Short(x.Reason)}")) : i.Error ?? "";
            instances.AddRow(
                Markup.Escape(i.Id),
                Markup.Escape(i.State),
                i.Pid?.ToString(CultureInfo.InvariantCulture) ?? "",
                Markup.Escape(i.HttpEndpoint?.ToString() ?? ""),
                i.LoadSeconds is { } l ? l.ToString("0.00 s", CultureInfo.InvariantCulture) : "",
                i.InFlight.ToString(CultureInfo.InvariantCulture),
                Markup.Escape(votes));
        }

        var decisions = new Table().Expand().AddColumns("Time", "Trigger", "Count", "Reason");
        foreach (Decisions.ScaleDecision d in s.Decisions.TakeLast(DecisionsShown))
        {
            decisions.AddRow(
                d.At.ToString("HH:mm:ss", CultureInfo.InvariantCulture),
                d.Trigger.ToString(),
                d.Changes ? $"{d.From} -> {d.To}" : d.To.ToString(CultureInfo.InvariantCulture),
                Markup.Escape(d.Reason));
        }

        return new Rows(header, new Markup(Markup.Escape("Reason: " + s.Reason)), new Markup(Markup.Escape(KeepAliveLine(s.KeepAlive))), instances, decisions);
    }

    private static string KeepAliveLine(KeepAliveStatus? k) => k switch
    {
        null => "Keep-alive: not reported",
        { Mode: "histogram" } => string.Create(CultureInfo.InvariantCulture, $"Keep-alive (histogram, {k.Basis}): pre-warm {k.PreWarmSeconds:0.#} s, keep-alive {k.KeepAliveSeconds:0.#} s; {k.IdleTimes} idle time(s), {k.OutOfBounds} out of bounds; idle {(k.IdleSeconds is { } i ? $"{i:0} s" : "-")}; state {k.State?.Bytes} B ({k.State?.Note})"),
        _ => "Keep-alive: " + k.Reason,
    };

    // One line per vote in an 80-column terminal; the full reasons are in GET /scale/status.
    private static string Short(string reason) => reason.Length <= ReasonChars ? reason : reason[..(ReasonChars - 1)] + "…";

    private static string Sign(int vote) => vote switch { > 0 => "+1", < 0 => "-1", _ => " 0" };
}
