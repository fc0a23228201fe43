using System.Net.Http.Json;
using FaaSCache.Diagnostics;

namespace FaaSCache.Tools;

/// <summary>
/// <c>host invocations|report|summary|maps</c>: what scripts/run-sample.sh prints about a running host, from the host's
/// typed invocation records (nothing is picked out of JSON in bash).
/// </summary>
public static class InvocationReport
{
    private static readonly JsonSerializerOptions Json = new(JsonSerializerDefaults.Web);
    private static readonly CultureInfo Inv = CultureInfo.InvariantCulture;

    /// <summary>Adds the commands to <paramref name="host"/>.</summary>
    public static void AddTo(Command host, Option<Uri> url)
    {
        var functions = new Option<string[]>("--function") { Description = "A function name; may be repeated.", AllowMultipleArgumentsPerToken = true, Required = true };
        var count = new Option<int>("--count") { Description = "Finished invocations each function must have.", DefaultValueFactory = _ => 1 };
        var timeout = new Option<double>("--timeout") { Description = "Seconds to wait at most.", DefaultValueFactory = _ => 30 };
        var wait = new Command("invocations", "Waits until each --function has at least --count finished invocations; prints those still missing on timeout.") { url, functions, count, timeout };
        wait.SetAction((r, ct) => WaitAsync(r.GetValue(url)!, r.GetValue(functions)!, r.GetValue(count), TimeSpan.FromSeconds(r.GetValue(timeout)), ct));

        var request = new Option<int>("--request") { Required = true, Description = "Which request (1-based): its invocations are the request-th of each function." };
        var requests = new Option<int>("--requests") { Required = true, Description = "How many requests were sent." };
        var status = new Option<string>("--status") { Required = true, Description = "The HTTP status the request got." };
        var seconds = new Option<double>("--seconds") { Required = true, Description = "The request's wall time (curl's time_total)." };
        var path = new Option<string>("--path") { Required = true, Description = "The request path after /api/." };
        var response = new Option<string>("--response") { Required = true, Description = "The file holding the response body." };
        var report = new Command("report", "Prints one request of a sample run: each function it set off, and where each input came from.")
        {
            url, functions, request, requests, status, seconds, path, response,
        };
        report.SetAction(async (r, ct) =>
        {
            IReadOnlyList<InvocationRecord> records = await GetAsync<List<InvocationRecord>>(r.GetValue(url)!, "admin/invocations", ct);
            string body = await File.ReadAllTextAsync(r.GetValue(response)!, ct);
            Console.Write(Request(records, r.GetValue(functions)!, r.GetValue(request), r.GetValue(requests), r.GetValue(status)!, r.GetValue(seconds), r.GetValue(path)!, body));
            return 0;
        });

        var cache = new Option<string>("--cache") { Required = true, Description = "on or off, for the heading." };
        var summary = new Command("summary", "Prints a sample run's summary; exits 1 when an invocation failed, warns when a stage ran more often than requests were sent.")
        {
            url, functions, requests, cache,
        };
        summary.SetAction(async (r, ct) =>
        {
            IReadOnlyList<InvocationRecord> records = await GetAsync<List<InvocationRecord>>(r.GetValue(url)!, "admin/invocations", ct);
            HostStatus hostStatus = await GetAsync<HostStatus>(r.GetValue(url)!, "admin/host/status", ct);
            (string text, int failed) = Summary(records, hostStatus, r.GetValue(functions)!, r.GetValue(requests), r.GetValue(cache)!);
            Console.Write(text);
            return failed == 0 ? 0 : 1;
        });

        var maps = new Command("maps", "Prints the shared-memory map names the recent invocations used, one line, space-separated.") { url };
        maps.SetAction(async (r, ct) =>
        {
            IReadOnlyList<InvocationRecord> records = await GetAsync<List<InvocationRecord>>(r.GetValue(url)!, "admin/invocations", ct);
            Console.WriteLine(string.Join(' ', records.SelectMany(x => x.Inputs.Select(i => i.MapName).Concat(x.Outputs.Select(o => o.MapName))).OfType<string>().Distinct().Order(StringComparer.Ordinal)));
            return 0;
        });

        host.Subcommands.Add(wait);
        host.Subcommands.Add(report);
        host.Subcommands.Add(summary);
        host.Subcommands.Add(maps);
    }

    private static async Task<int> WaitAsync(Uri url, string[] functions, int count, TimeSpan timeout, CancellationToken cancellationToken)
    {
        var clock = System.Diagnostics.Stopwatch.StartNew();
        string[] missing = functions;
        while (clock.Elapsed < timeout)
        {
            IReadOnlyList<InvocationRecord> records = await GetAsync<List<InvocationRecord>>(url, "admin/invocations", cancellationToken);
            missing = [.. functions.Where(f => records.Count(r => r.Function == f && r.Status != "running") < count)];
            if (missing.Length == 0)
            {
                return 0;
            }

            await Task.Delay(100, cancellationToken);
        }

        Console.WriteLine(string.Join(' ', missing));
        return 1;
    }

    private static string Request(IReadOnlyList<InvocationRecord> records, string[] functions, int i, int n, string status, double seconds, string path, string body)
    {
        var text = new StringBuilder();
        text.AppendLine(Inv, $"request {i}/{n}: GET /api/{path} -> HTTP {status} in {seconds * 1000:0.0} ms");
        string shown = body.Trim();
        text.AppendLine(Inv, $"  response: {(shown.Length > 200 ? shown[..200] + "..." : shown)}");
        // Binding names are as long as the app made them (Node.js v4's are generated: blobInput<10 hex>).
        int bindingWidth = Math.Max(10, records.SelectMany(r => r.Inputs.Select(x => x.Binding).Concat(r.Outputs.Select(x => x.Binding))).Select(b => b.Length + 1).DefaultIfEmpty(0).Max());
        text.AppendLine(Inv, $"  {"function",-15}{"trigger",-9}{"status",-8}{"ms",9}  {"binding".PadRight(bindingWidth)}{"blob",-33}{"source",-19}{"bytes",12}{"copied",13}");
        foreach (string function in functions)
        {
            InvocationRecord? r = records.Where(x => x.Function == function).Skip(i - 1).FirstOrDefault();
            if (r is null)
            {
                text.AppendLine(Inv, $"  {function,-15}(no invocation recorded)");
                continue;
            }

            string head = string.Create(Inv, $"  {function,-15}{r.Trigger,-9}{(r.Status == "succeeded" ? "ok" : r.Status),-8}{r.DurationMs,9:0.0}  ");
            var rows = r.Inputs.Select(x => (x.Binding, x.Key, Source: x.Source.ToUpperInvariant(), x.Bytes, x.BytesCopied))
                .Concat(r.Outputs.Select(x => (x.Binding, x.Key, Source: "out " + (x.Adopted ? "adopted" : "copied") + (x.Persisted ? ",stored" : string.Empty), x.Bytes, x.BytesCopied)))
                .ToList();
            if (rows.Count == 0)
            {
                rows.Add(("-", "-", "-", 0, 0));
            }

            for (int k = 0; k < rows.Count; k++)
            {
                (string binding, string key, string source, long bytes, long copied) = rows[k];
                text.AppendLine(Inv, $"{(k == 0 ? head : new string(' ', head.Length))}{binding.PadRight(bindingWidth)}{key,-33}{source,-19}{bytes,12:N0}{copied,13:N0}");
            }

            if (r.Error is { } error)
            {
                text.AppendLine(Inv, $"  {string.Empty,-15}error: {(error.Length > 300 ? error[..300] : error)}");
            }
        }

        return text.ToString();
    }

    private static (string Text, int Failed) Summary(IReadOnlyList<InvocationRecord> records, HostStatus status, string[] functions, int n, string cache)
    {
        var text = new StringBuilder();
        text.AppendLine(Inv, $"summary: {n} request(s), cache {cache}");
        text.AppendLine(Inv, $"  {"function",-15}{"invocations",12}{"first ms",11}{"later ms (mean)",17}{"copied, first",16}{"copied, later (mean)",22}");
        foreach (string function in functions)
        {
            List<InvocationRecord> runs = [.. records.Where(r => r.Function == function).Take(n)];
            if (runs.Count == 0)
            {
                continue;
            }

            long[] copied = [.. runs.Select(r => r.Inputs.Sum(x => x.BytesCopied) + r.Outputs.Sum(x => x.BytesCopied))];
            string laterMs = runs.Count > 1 ? runs.Skip(1).Average(r => r.DurationMs).ToString("0.0", Inv) : "-";
            string laterCopied = runs.Count > 1 ? Math.Round(copied.Skip(1).Average()).ToString("N0", Inv) : "-";
            text.AppendLine(Inv, $"  {function,-15}{runs.Count,12}{runs[0].DurationMs,11:0.0}{laterMs,17}{copied[0],16:N0}{laterCopied,22}");
        }

        text.AppendLine(Inv, $"  host: {status.Invocations.Succeeded} invocations succeeded, {status.Invocations.Failed} failed, {status.Invocations.BytesCopied:N0} bytes copied in all");
        if (status.Counters is { } c)
        {
            text.AppendLine(Inv, $"  cachelet: {c.LocalHits} local hits, {c.LocalMisses} local misses, {c.BytesFetched:N0} bytes fetched from storage, {c.BytesServed:N0} bytes served, {c.Writes} writes, {c.BytesCached:N0} bytes in {c.ObjectsCached} objects cached");
        }

        foreach (string function in functions.Skip(1))
        {
            int ran = records.Count(r => r.Function == function);
            if (ran > n)
            {
                text.AppendLine(Inv, $"[run-sample] warning: {function} ran {ran} times for {n} requests (a write fired it twice)");
            }
        }

        int failed = records.Count(r => r.Status == "failed");
        if (failed > 0)
        {
            text.AppendLine(Inv, $"[run-sample] {failed} invocation(s) failed");
        }

        return (text.ToString(), failed);
    }

    private static async Task<T> GetAsync<T>(Uri url, string path, CancellationToken cancellationToken)
    {
        using var http = new HttpClient { BaseAddress = url, Timeout = TimeSpan.FromSeconds(10) };
        return await http.GetFromJsonAsync<T>(path, Json, cancellationToken)
            ?? throw new InvalidOperationException($"{url}{path} answered null");
    }
}
