using System.Text.RegularExpressions;

namespace FaaSCache.Keda;

/// <summary>
/// The one metric the KEDA face serves: the instance count the scale controller wants for an app. KEDA names it
/// <c>s&lt;triggerIndex&gt;-faascache-desired-instances</c> in the HPA and strips that prefix before it asks for values.
/// </summary>
public static partial class KedaMetric
{
    /// <summary>The metric's name as this scaler gives it in <c>GetMetricSpec</c>.</summary>
    public const string Name = "faascache-desired-instances";

    /// <summary>
    /// True when <paramref name="requested"/> names this metric, with or without KEDA's <c>s&lt;index&gt;-</c> prefix
    /// (KEDA strips it before calling GetMetrics; other callers of the same proto may not).
    /// </summary>
    public static bool Matches(string? requested) =>
        requested is not null && string.Equals(TriggerIndexPrefix().Replace(requested, string.Empty, 1), Name, StringComparison.Ordinal);

    [GeneratedRegex("^s[0-9]+-", RegexOptions.CultureInvariant)]
    private static partial Regex TriggerIndexPrefix();
}
