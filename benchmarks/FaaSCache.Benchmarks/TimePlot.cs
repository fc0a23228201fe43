using ScottPlot;
using ScottPlot.Plottables;

namespace FaaSCache.Benchmarks;

/// <summary>The benchmarks' plots over time: lines against seconds on a left and a right y axis, saved as a 1200x600 PNG.</summary>
internal sealed class TimePlot(IEnumerable<double> seconds) : IDisposable
{
    private readonly Plot _plot = new();
    private readonly double[] _seconds = [.. seconds];

    /// <summary>Adds a line of <paramref name="values"/> (one per second given), on the right axis when <paramref name="right"/>.</summary>
    public Scatter Line(IEnumerable<double> values, string label, bool right, float markerSize = 0)
    {
        Scatter line = _plot.Add.Scatter(_seconds, [.. values]);
        line.LegendText = label;
        line.MarkerSize = markerSize;
        if (right)
        {
            line.Axes.YAxis = _plot.Axes.Right;
        }

        return line;
    }

    /// <summary>Titles and labels the plot (time in seconds across) and saves it as <paramref name="path"/>.</summary>
    public void Save(string path, string title, string leftAxis, string rightAxis, Alignment legend)
    {
        _plot.Title(title);
        _plot.XLabel("time (s)");
        _plot.YLabel(leftAxis);
        _plot.Axes.Right.Label.Text = rightAxis;
        _plot.ShowLegend(legend);
        _plot.SavePng(path, 1200, 600);
    }

    public void Dispose() => _plot.Dispose();
}
