using NCrontab;

namespace FaaSCache.Host.Triggers;

/// <summary>
/// A timer trigger's <c>schedule</c>, read as the Functions host reads it: a six-field NCRONTAB expression
/// (<c>{second} {minute} {hour} {day} {month} {day-of-week}</c>, five fields also accepted) or a TimeSpan such as
/// <c>00:05:00</c> (every five minutes).
/// </summary>
public sealed class TimerSchedule
{
    private readonly CrontabSchedule? _cron;
    private readonly TimeSpan _interval;

    private TimerSchedule(CrontabSchedule? cron, TimeSpan interval)
    {
        _cron = cron;
        _interval = interval;
    }

    /// <summary>Parses a schedule; a bad one throws <see cref="FormatException"/> naming it and what is allowed.</summary>
    public static TimerSchedule Parse(string schedule)
    {
        ArgumentNullException.ThrowIfNull(schedule);
        string text = schedule.Trim();
        if (text.Split(' ', StringSplitOptions.RemoveEmptyEntries) is { Length: 5 or 6 } fields)
        {
            CrontabSchedule? cron = CrontabSchedule.TryParse(text, new CrontabSchedule.ParseOptions { IncludingSeconds = fields.Length == 6 });
            if (cron is not null)
            {
                return new TimerSchedule(cron, TimeSpan.Zero);
            }
        }
        else if (TimeSpan.TryParse(text, CultureInfo.InvariantCulture, out TimeSpan interval) && interval > TimeSpan.Zero)
        {
            return new TimerSchedule(null, interval);
        }

        throw new FormatException(
            $"schedule '{schedule}' is not an NCRONTAB expression ('{{second}} {{minute}} {{hour}} {{day}} {{month}} {{day-of-week}}', e.g. '0 */5 * * * *') or a positive TimeSpan ('00:05:00').");
    }

    /// <summary>The first occurrence after <paramref name="after"/>.</summary>
    public DateTimeOffset Next(DateTimeOffset after)
        => _cron is null ? after + _interval : new DateTimeOffset(_cron.GetNextOccurrence(after.UtcDateTime), TimeSpan.Zero);
}
