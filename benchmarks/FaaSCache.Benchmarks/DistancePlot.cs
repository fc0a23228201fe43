using ScottPlot;

namespace FaaSCache.Benchmarks;

/// <summary>
/// A <see cref="DistanceCsv"/> file drawn as grouped bars: one group per storage distance, one bar per row label (a
/// path or a mode) with its value in milliseconds, so loopback and storage far away sit side by side.
/// </summary>
internal static class DistancePlot
{
    /// <summary>
    /// Draws <paramref name="csvPath"/> (first column <c>storage_latency_ms</c>, then the label column, then the value
    /// column) as <paramref name="pngPath"/>; returns the PNG's path.
    /// </summary>
    public static string Save(string csvPath, string pngPath, string title, string valueLabel)
    {
        string[] lines = File.ReadAllLines(csvPath);
        var rows = lines.Skip(1).Where(l => l.Length > 0).Select(l => l.Split(','))
            .Select(c => (Distance: double.Parse(c[0], CultureInfo.InvariantCulture), Label: c[1], Value: double.Parse(c[2], CultureInfo.InvariantCulture)))
            .ToList();
        double[] distances = [.. rows.Select(r => r.Distance).Distinct().Order()];
        string[] labels = [.. rows.Select(r => r.Label).Distinct()];
        Color[] colors = [Colors.Gray, Colors.SteelBlue, Colors.DarkOrange, Colors.SeaGreen, Colors.Purple];

        using var plot = new Plot();
        var bars = new List<Bar>();
        for (int d = 0; d < distances.Length; d++)
        {
            for (int l = 0; l < labels.Length; l++)
            {
                if (rows.FirstOrDefault(r => r.Distance == distances[d] && r.Label == labels[l]) is { Label: not null } row)
                {
                    double position = (d * (labels.Length + 1)) + l;
                    bars.Add(new Bar { Position = position, Value = row.Value, FillColor = colors[l % colors.Length], Label = row.Value.ToString(row.Value < 100 ? "0.0" : "0", CultureInfo.InvariantCulture) });
                }
            }
        }

        var plottable = plot.Add.Bars(bars);
        plottable.ValueLabelStyle.FontSize = 12;
        for (int l = 0; l < labels.Length; l++)
        {
            plot.Legend.ManualItems.Add(new LegendItem { LabelText = labels[l], FillColor = colors[l % colors.Length] });
        }

        Tick[] ticks = [.. distances.Select((d, i) => new Tick((i * (labels.Length + 1)) + ((labels.Length - 1) / 2.0), d == 0 ? "storage on loopback" : $"storage {d:0.##} ms away"))];
        plot.Axes.Bottom.TickGenerator = new ScottPlot.TickGenerators.NumericManual(ticks);
        plot.Axes.Margins(bottom: 0);
        plot.Title(title);
        plot.YLabel(valueLabel);
        plot.ShowLegend(Alignment.UpperLeft);
        plot.SavePng(pngPath, 900, 550);
        return pngPath;
    }
}
