using System.Buffers.Binary;
using System.Text.Json;
using System.Text.Json.Serialization;

namespace FaaSCache.ScaleController.KeepAlive;

/// <summary>
/// An <see cref="IdleTimeHistogram"/> as stored in its blob: compact JSON with the bins as base64 of one little-endian
/// 16-bit count each (240 bins: 640 characters; the whole state about 0.75 KB, the paper's ~960 bytes).
/// </summary>
public sealed record HistogramState(
    [property: JsonPropertyName("v")] int Version,
    [property: JsonPropertyName("binMs")] long BinMilliseconds,
    [property: JsonPropertyName("bins")] string Bins,
    [property: JsonPropertyName("oob")] int OutOfBounds,
    [property: JsonPropertyName("oobSec")] IReadOnlyList<double> RecentOutOfBoundsSeconds)
{
    /// <summary>The format version written.</summary>
    public const int CurrentVersion = 1;

    /// <summary>Captures <paramref name="histogram"/>.</summary>
    public static HistogramState From(IdleTimeHistogram histogram)
    {
        ArgumentNullException.ThrowIfNull(histogram);
        ReadOnlySpan<ushort> counts = histogram.Counts;
        byte[] bytes = new byte[counts.Length * 2];
        for (int i = 0; i < counts.Length; i++)
        {
            BinaryPrimitives.WriteUInt16LittleEndian(bytes.AsSpan(i * 2), counts[i]);
        }

        return new(
            CurrentVersion,
            (long)histogram.BinWidth.TotalMilliseconds,
            Convert.ToBase64String(bytes),
            histogram.OutOfBounds,
            [.. histogram.RecentOutOfBounds.Select(t => Math.Round(t.TotalSeconds, 1))]);
    }

    /// <summary>Reads a stored state; throws <see cref="FormatException"/> when it is not one.</summary>
    public static HistogramState Parse(ReadOnlySpan<byte> json)
    {
        HistogramState? state;
        try
        {
            state = JsonSerializer.Deserialize(json, HistogramStateJson.Default.HistogramState);
        }
        catch (JsonException e)
        {
            throw new FormatException("The histogram state is not valid JSON: " + e.Message, e);
        }

        if (state is null || state.Version != CurrentVersion || state.Bins is null || state.RecentOutOfBoundsSeconds is null)
        {
            throw new FormatException($"The histogram state is not version {CurrentVersion} with bins and out-of-bounds idle times.");
        }

        return state;
    }

    /// <summary>The state as stored (UTF-8 JSON).</summary>
    public byte[] ToJson() => JsonSerializer.SerializeToUtf8Bytes(this, HistogramStateJson.Default.HistogramState);

    /// <summary>Loads the state into <paramref name="histogram"/>; throws <see cref="FormatException"/> when its bin width or count differ.</summary>
    public void RestoreInto(IdleTimeHistogram histogram)
    {
        ArgumentNullException.ThrowIfNull(histogram);
        byte[] bytes = Convert.FromBase64String(Bins);
        if (BinMilliseconds != (long)histogram.BinWidth.TotalMilliseconds || bytes.Length != histogram.Counts.Length * 2)
        {
            throw new FormatException($"The stored histogram has {bytes.Length / 2} bins of {BinMilliseconds} ms; this controller uses {histogram.Counts.Length} of {histogram.BinWidth.TotalMilliseconds} ms.");
        }

        ushort[] counts = new ushort[bytes.Length / 2];
        for (int i = 0; i < counts.Length; i++)
        {
            counts[i] = BinaryPrimitives.ReadUInt16LittleEndian(bytes.AsSpan(i * 2));
        }

        histogram.Restore(counts, OutOfBounds, RecentOutOfBoundsSeconds.Select(TimeSpan.FromSeconds));
    }
}

/// <summary>Source-generated JSON for <see cref="HistogramState"/>.</summary>
[JsonSerializable(typeof(HistogramState))]
internal sealed partial class HistogramStateJson : JsonSerializerContext;
