using System.Text;
using System.Text.Encodings.Web;
using System.Text.Json;
using R = FaaSCache.Options.FaaSCacheOptionsRules;

namespace FaaSCache.Options;

/// <summary>Renders the effective <see cref="FaaSCacheOptions"/> as indented JSON for the start-up log.</summary>
public static class FaaSCacheOptionsFormatter
{
    /// <summary>
    /// The options as indented camelCase JSON in host.json's shape, enums by their host.json names, plus
    /// <c>effectivePersist</c> and <c>effectiveCapacityBytes</c> (what is in force when persist or capacity is unset).
    /// Every setting shown acts on something.
    /// </summary>
    /// <param name="o">The options.</param>
    /// <returns>The JSON text.</returns>
    public static string Format(FaaSCacheOptions o)
    {
        ArgumentNullException.ThrowIfNull(o);

        using var buffer = new MemoryStream();
        var writerOptions = new JsonWriterOptions { Indented = true, Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping };
        using (var w = new Utf8JsonWriter(buffer, writerOptions))
        {
            w.WriteStartObject();
            w.WriteString(R.Consistency, R.Name(o.Consistency));
            WriteNullableString(w, R.Persist, o.Persist is { } persist ? R.Name(persist) : null);
            w.WriteString("effectivePersist", R.Name(o.EffectivePersist));

            if (o.Eviction is { } eviction)
            {
                w.WriteStartObject(R.Eviction);
                w.WriteString(R.Policy, R.Name(eviction.Policy));
                w.WriteNumber(R.SizeThresholdBytes, eviction.SizeThresholdBytes);
                WriteNullableString(w, R.Ttl, R.Format(eviction.Ttl));
                w.WriteEndObject();
            }

            w.WriteNumber(R.MemoryHeadroomPercent, o.MemoryHeadroomPercent);
            if (o.MemoryLimitBytes is { } limit)
            {
                w.WriteNumber(R.MemoryLimitBytes, limit);
            }
            else
            {
                w.WriteNull(R.MemoryLimitBytes);
            }

            if (o.CapacityBytes is { } capacity)
            {
                w.WriteNumber(R.CapacityBytes, capacity);
            }
            else
            {
                w.WriteNull(R.CapacityBytes);
            }

            w.WriteNumber("effectiveCapacityBytes", o.EffectiveCapacityBytes);

            w.WriteStartArray(R.DoNotCache);
            foreach (string pattern in o.DoNotCache ?? [])
            {
                w.WriteStringValue(pattern);
            }

            w.WriteEndArray();
            w.WriteBoolean(R.SdkEndpoint, o.SdkEndpoint);

            if (o.Prewarm is { } prewarm)
            {
                w.WriteStartObject(R.Prewarm);
                w.WriteBoolean(R.Enabled, prewarm.Enabled);
                w.WriteNumber(R.HitRateThreshold, prewarm.HitRateThreshold);
                w.WriteEndObject();
            }

            if (o.Scaling is { } scaling)
            {
                w.WriteStartObject(R.Scaling);
                w.WriteBoolean(R.Compute, scaling.Compute);
                w.WriteBoolean(R.CacheSize, scaling.CacheSize);
                w.WriteBoolean(R.Bandwidth, scaling.Bandwidth);
                w.WriteNumber(R.TargetConcurrency, scaling.TargetConcurrency);
                WriteNullableString(w, R.TargetLatency, R.Format(scaling.TargetLatency));
                w.WriteNumber(R.LowAccessRate, scaling.LowAccessRate);
                w.WriteString(R.ProfileInterval, R.Format(scaling.ProfileInterval));
                w.WriteEndObject();
            }

            if (o.Membership is { } membership)
            {
                w.WriteStartObject(R.Membership);
                w.WriteString(R.HeartbeatInterval, R.Format(membership.HeartbeatInterval));
                w.WriteString(R.FailureTimeout, R.Format(membership.FailureTimeout));
                w.WriteNumber(R.VirtualNodes, membership.VirtualNodes);
                w.WriteString(R.WatchInterval, R.Format(membership.WatchInterval));
                w.WriteEndObject();
            }

            w.WriteEndObject();
        }

        return Encoding.UTF8.GetString(buffer.GetBuffer(), 0, (int)buffer.Length);
    }

    private static void WriteNullableString(Utf8JsonWriter writer, string name, string? value)
    {
        if (value is null)
        {
            writer.WriteNull(name);
        }
        else
        {
            writer.WriteString(name, value);
        }
    }
}
