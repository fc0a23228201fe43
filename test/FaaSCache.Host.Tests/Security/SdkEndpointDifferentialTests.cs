using FaaSCache.Host.Tests.BlobEndpoint;

namespace FaaSCache.Host.Tests.Security;

/// <summary>
/// Differential test of the SDK endpoint's authentication (issue 31, item 3): a seeded matrix of signed, mis-signed and
/// unsigned requests goes byte for byte to an Azurite (A) and to the endpoint in front of a second Azurite (B) seeded
/// alike; both must give the same status and <c>x-ms-error-code</c>, unless the case is one of
/// <see cref="KnownDivergences"/>, where the endpoint deliberately answers as Azure does and Azurite does not.
/// </summary>
[Trait("Category", "Security")]
public sealed class SdkEndpointDifferentialTests(ITestOutputHelper output) : IAsyncLifetime
{
    // Change the seed (FAASCACHE_MATRIX_SEED) to explore another matrix; the default keeps CI's run reproducible.
    private const int DefaultSeed = 31_03;
    private const int CaseCount = 560;

    private const string AuthenticationFailed = "AuthenticationFailed";
    private const string AuthorizationFailure = "AuthorizationFailure";

    /// <summary>
    /// Where the endpoint answers otherwise than Azurite on purpose. Each row: the cases it covers, what Azurite answers,
    /// what the endpoint answers, and why (storage's documented behaviour). Every row must be observed in a run.
    /// </summary>
    internal static readonly KnownDivergence[] KnownDivergences =
    [
        new("name with an empty, '.' or '..' segment",
            c => c.ForOwnAccount && c.IsBlobLevel && c.HasDotOrEmptySegment,
            "whatever it answers for that literal name (it stores 'a/../b' as is)", a => !a.Is(400, "InvalidResourceName"),
            400, "InvalidResourceName",
            "Neither answer can be matched safely: Azure takes such names but aliases them (PUT ./key stores key, azure-sdk-for-rust#5275, "
            + "undocumented), Azurite keeps them literally, and HTTP clients fold them, so 'shared/../secret/x' would reach another cache key "
            + "under a SAS for 'shared'. The endpoint refuses them before any credential is looked at, with the 400 the naming rules give "
            + "for a name that breaks them ('No path segments should end with a dot')."),
        new("Shared Key signature that does not verify (junk signature, or another account named in the header)",
            c => c.ForOwnAccount && !c.HasDotOrEmptySegment && c.Credential is Credential.SharedKeyJunkSignature or Credential.SharedKeyOtherAccountName,
            "403 AuthorizationFailure", a => a.Is(403, AuthorizationFailure),
            403, AuthenticationFailed,
            "Azure answers 403 AuthenticationFailed ('The MAC signature found in the HTTP request ... is not the same as any computed "
            + "signature', Authorize-with-Shared-Key; Common REST error codes); Azurite's authenticator returns false and its middleware "
            + "raises AuthorizationFailure for every failed signature."),
        new("Shared Key request dated 20 minutes ago",
            c => c.ForOwnAccount && !c.HasDotOrEmptySegment && c.Credential == Credential.SharedKeyStaleDate,
            "what a current request gets (it never reads x-ms-date)", a => a.Status != 403,
            403, AuthenticationFailed,
            "Authorize-with-Shared-Key: 'a request is no older than 15 minutes by the time it reaches the service ... the server returns "
            + "403 (Forbidden)', as AuthenticationFailed ('Request date header too old'); Azurite has no date check, so a captured request "
            + "replays for ever there."),
        new("SAS signed for another blob or another container, on an operation the endpoint serves",
            c => c.ForOwnAccount && !c.HasDotOrEmptySegment && c.EndpointServes && c.Credential is Credential.ServiceSasOtherBlob or Credential.ServiceSasOtherContainer,
            "403 AuthorizationFailure", a => a.Is(403, AuthorizationFailure),
            403, AuthenticationFailed,
            "SAS-Error-Codes: a signature that does not match is 403 AuthenticationFailed ('Signature did not match'); Azurite's SAS "
            + "authenticators return false and it answers AuthorizationFailure. Forwarded operations take storage's (Azurite's) answer."),
        new("SAS outside its time window (expired or not yet valid), on an operation the endpoint serves",
            c => c.ForOwnAccount && !c.HasDotOrEmptySegment && c.EndpointServes && c.SasSignedForTarget && c.Twist is SasTwist.Expired or SasTwist.NotYetValid,
            "403 AuthorizationFailure", a => a.Is(403, AuthorizationFailure),
            403, AuthenticationFailed,
            "Azure answers 403 AuthenticationFailed with the detail 'Signature not valid in the specified time frame: Start [...] - Expiry "
            + "[...] - Current [...]' (e.g. microsoft/AzureStorageExplorer#3219); Azurite's time check raises AuthorizationFailure."),
        new("SAS with an empty sp, on an operation the endpoint serves",
            c => c.ForOwnAccount && !c.HasDotOrEmptySegment && c.EndpointServes && c.IsSas && c.Permissions.Length == 0,
            "403: AuthorizationFailure for a service SAS (its blob-SAS authenticator takes an empty sp for no SAS); for an account SAS, "
            + "which it takes as granting nothing, the first failing check (AuthorizationPermissionMismatch when ss, srt, time and spr pass)",
            a => a.Status == 403 && a.ErrorCode != AuthenticationFailed,
            403, AuthenticationFailed,
            "Azure answers 403 AuthenticationFailed with the detail 'sp is mandatory. Cannot be empty' (seen in codalab/codabench#1192 and "
            + "Azure/azure-storage-node#175; create-service-sas: signedPermissions is required)."),
        new("SAS whose sip range excludes the caller, on an operation the endpoint serves",
            c => c.ForOwnAccount && !c.HasDotOrEmptySegment && c.EndpointServes && c.SasSignedForTarget && c.Twist == SasTwist.SourceIpElsewhere,
            "what the same SAS without sip gets (validateIPRange always returns true)", a => !a.Is(403, "AuthorizationSourceIPMismatch"),
            403, "AuthorizationSourceIPMismatch",
            "SAS-Error-Codes: a request from outside sip is 403 AuthorizationSourceIPMismatch; Azurite defines that error and never raises "
            + "it. The endpoint checks sip after time and protocol and before ss, srt and sp."),
    ];

    private AzuriteFixture? _storage;
    private AzuriteFixture? _behindEndpoint;
    private SdkEndpointRig? _rig;

    public async Task InitializeAsync()
    {
        _storage = new AzuriteFixture();
        _behindEndpoint = new AzuriteFixture();
        try
        {
            await Task.WhenAll(_storage.InitializeAsync(), _behindEndpoint.InitializeAsync());
            _rig = await SdkEndpointRig.StartAsync(_behindEndpoint);
            // Both stores start alike: the containers and a seed blob; every case then adds its own uniquely named blobs.
            foreach (AzuriteFixture azurite in new[] { _storage, _behindEndpoint })
            {
                BlobServiceClient client = azurite.CreateServiceClient();
                foreach (string name in new[] { MatrixCase.Container, MatrixCase.OtherContainer })
                {
                    BlobContainerClient container = client.GetBlobContainerClient(name);
                    await container.CreateAsync();
                    await container.GetBlobClient(MatrixCase.SeedBlob).UploadAsync(BinaryData.FromString("seed"));
                }
            }
        }
        catch
        {
            await DisposeAsync();
            throw;
        }
    }

    public async Task DisposeAsync()
    {
        // Also called by a failed InitializeAsync: whatever started is stopped once.
        if (Interlocked.Exchange(ref _rig, null) is { } rig)
        {
            await rig.DisposeAsync();
        }

        await Task.WhenAll(_storage?.DisposeAsync() ?? Task.CompletedTask, _behindEndpoint?.DisposeAsync() ?? Task.CompletedTask);
    }

    [Fact]
    public async Task the_same_signed_request_gets_the_same_status_and_error_code_from_azurite_and_from_the_endpoint()
    {
        int seed = int.TryParse(Environment.GetEnvironmentVariable("FAASCACHE_MATRIX_SEED"), CultureInfo.InvariantCulture, out int chosen) ? chosen : DefaultSeed;
        var matrix = new DifferentialMatrix(seed, DateTimeOffset.UtcNow);
        List<MatrixCase> cases = matrix.Generate(CaseCount);
        var azurite = new IPEndPoint(IPAddress.Loopback, _storage!.Server.Port);
        var endpoint = new IPEndPoint(IPAddress.Loopback, _rig!.Address.Port);
        output.WriteLine($"Seed {seed}: {cases.Count} cases; Azurite A at {azurite}, the endpoint at {endpoint} over Azurite B at port {_behindEndpoint!.Server.Port}.");

        var clock = Stopwatch.StartNew();
        var outcomes = new List<Outcome>();
        foreach (MatrixCase c in cases)
        {
            foreach (Exchange exchange in matrix.Exchanges(c))
            {
                // Both at once, but each request waits for the one before it: both stores see the same sequence.
                Task<RawAnswer> fromAzurite = RawHttp.SendAsync(azurite, exchange.Request);
                Task<RawAnswer> fromEndpoint = RawHttp.SendAsync(endpoint, exchange.Request);
                outcomes.Add(Judge(exchange, await fromAzurite, await fromEndpoint));
            }
        }

        output.WriteLine($"{outcomes.Count} requests sent to each side in {clock.Elapsed.TotalSeconds:0.0} s.");
        if (Environment.GetEnvironmentVariable("FAASCACHE_MATRIX_TRACE") == "1")
        {
            // Every request and both answers, to read what the matrix reached (not only where it disagreed).
            output.WriteLine(string.Join("\n", outcomes.Select(o =>
                $"{o.Verdict,-8} A {o.Azurite,-40} E {o.Endpoint,-40} {o.Exchange.Request.Method} {o.Exchange.Request.Target} [{o.Exchange.Case}{(o.Exchange.IsSetup ? " setup" : "")}]")));
        }

        output.WriteLine(Summary(outcomes));

        List<Outcome> mismatches = [.. outcomes.Where(o => o.Verdict == Verdict.Mismatch)];
        Assert.True(mismatches.Count == 0,
            $"{mismatches.Count} of {outcomes.Count} requests got different answers from Azurite and the endpoint, outside the known divergences:\n\n"
            + string.Join("\n\n", mismatches.Select(Describe)));

        int caseRequests = outcomes.Count(o => !o.Exchange.IsSetup);
        Assert.True(caseRequests >= 500, $"Only {caseRequests} case requests were generated; the matrix needs at least 500.");

        string[] unseen = [.. KnownDivergences.Where(d => !outcomes.Any(o => o.Divergence == d)).Select(d => d.Name)];
        Assert.True(unseen.Length == 0, $"Known divergences never observed (drop them from the table or make the matrix reach them): {string.Join("; ", unseen)}");

        // A matrix of refusals only would agree trivially: every operation must also have got past authentication on both sides.
        MatrixOperation[] neverAuthorized = [.. Enum.GetValues<MatrixOperation>().Where(op =>
            !outcomes.Any(o => !o.Exchange.IsSetup && o.Exchange.Case.Operation == op && PassedAuthentication(o.Azurite) && PassedAuthentication(o.Endpoint)))];
        Assert.True(neverAuthorized.Length == 0, $"Operations never authorized on both sides (the matrix only tested refusals for them): {string.Join(", ", neverAuthorized)}");
    }

    private static bool PassedAuthentication(RawAnswer answer) =>
        answer.Status != 403 && answer.ErrorCode is not ("ResourceNotFound" or "InvalidResourceName");

    private static Outcome Judge(Exchange exchange, RawAnswer azurite, RawAnswer endpoint)
    {
        if (azurite.Status == endpoint.Status && string.Equals(azurite.ErrorCode, endpoint.ErrorCode, StringComparison.Ordinal))
        {
            return new Outcome(exchange, azurite, endpoint, Verdict.Match, null);
        }

        KnownDivergence? known = exchange.IsSetup
            ? null
            : KnownDivergences.FirstOrDefault(d => d.Applies(exchange.Case) && d.AzuriteFits(azurite) && endpoint.Is(d.EndpointStatus, d.EndpointCode));
        return new Outcome(exchange, azurite, endpoint, known is null ? Verdict.Mismatch : Verdict.Known, known);
    }

    private static string Summary(List<Outcome> outcomes)
    {
        var text = new StringBuilder();
        void Table(string title, Func<Outcome, string> key)
        {
            text.Append('\n').Append(title).Append('\n');
            text.Append(CultureInfo.InvariantCulture, $"  {"category",-44} {"requests",8} {"match",6} {"known",6} {"MISMATCH",8} {"2xx on A",8}\n");
            foreach (IGrouping<string, Outcome> group in outcomes.GroupBy(key).OrderBy(g => g.Key, StringComparer.Ordinal))
            {
                text.Append(CultureInfo.InvariantCulture,
                    $"  {group.Key,-44} {group.Count(),8} {group.Count(o => o.Verdict == Verdict.Match),6} {group.Count(o => o.Verdict == Verdict.Known),6} "
                    + $"{group.Count(o => o.Verdict == Verdict.Mismatch),8} {group.Count(o => o.Azurite.Status is >= 200 and < 300),8}\n");
            }
        }

        Table("By credential (setup = valid Shared Key requests that give both stores a case's blob or blocks):",
            o => o.Exchange.IsSetup ? "setup" : o.Exchange.Case.IsSas && o.Exchange.Case.Twist != SasTwist.None ? $"{o.Exchange.Case.Credential} + {o.Exchange.Case.Twist}" : o.Exchange.Case.Credential.ToString());
        Table("By operation (case requests only):", o => o.Exchange.IsSetup ? "(setup)" : o.Exchange.Case.Operation.ToString());
        Table("By name and account (case requests only):",
            o => o.Exchange.IsSetup ? "(setup)" : $"{o.Exchange.Case.Shape}{(o.Exchange.Case.ForOwnAccount ? "" : $" @ {o.Exchange.Case.Account}")}");

        text.Append("\nKnown divergences (Azurite -> endpoint):\n");
        foreach (KnownDivergence d in KnownDivergences)
        {
            text.Append(CultureInfo.InvariantCulture,
                $"  {outcomes.Count(o => o.Divergence == d),4} x {d.Name}: Azurite {d.AzuriteAnswers}; endpoint {d.EndpointStatus} {d.EndpointCode}.\n         Why: {d.Why}\n");
        }

        int all = outcomes.Count;
        text.Append(CultureInfo.InvariantCulture,
            $"\nTotal: {all} requests, {outcomes.Count(o => o.Verdict == Verdict.Match)} match, {outcomes.Count(o => o.Verdict == Verdict.Known)} known divergences, "
            + $"{outcomes.Count(o => o.Verdict == Verdict.Mismatch)} mismatches.");
        return text.ToString();
    }

    private static string Describe(Outcome o)
    {
        RawRequest r = o.Exchange.Request;
        string headers = string.Join("\n", r.Headers
            .Where(h => h.Key is "Authorization" or "x-ms-date" or "If-None-Match" or "x-ms-range" or "Range" or "x-ms-blob-type" or "Content-Length")
            .Select(h => $"    {h.Key}: {h.Value}"));
        return $"{o.Exchange.Case} ({(o.Exchange.IsSetup ? "setup: " : "")}{o.Exchange.Step})\n"
            + $"  {r.Method} {r.Target}\n{headers}\n"
            + $"  Azurite:  {o.Azurite}\n    {Indent(o.Azurite.Body)}\n"
            + $"  Endpoint: {o.Endpoint}\n    {Indent(o.Endpoint.Body)}";
    }

    private static string Indent(string body) => body.Length == 0 ? "(no body)" : body.Trim().Replace("\n", "\n    ", StringComparison.Ordinal);

    private enum Verdict
    {
        Match,
        Known,
        Mismatch,
    }

    private sealed record Outcome(Exchange Exchange, RawAnswer Azurite, RawAnswer Endpoint, Verdict Verdict, KnownDivergence? Divergence);
}

/// <summary>One deliberate difference between Azurite and the endpoint (a row of <see cref="SdkEndpointDifferentialTests.KnownDivergences"/>).</summary>
/// <param name="Name">What the cases have in common.</param>
/// <param name="Applies">Which generated cases it covers.</param>
/// <param name="AzuriteAnswers">Azurite's answer, in words.</param>
/// <param name="AzuriteFits">Whether an answer of Azurite is the one described.</param>
/// <param name="EndpointStatus">The endpoint's status.</param>
/// <param name="EndpointCode">The endpoint's <c>x-ms-error-code</c>.</param>
/// <param name="Why">Why the endpoint answers so: storage's documented behaviour.</param>
internal sealed record KnownDivergence(
    string Name,
    Func<MatrixCase, bool> Applies,
    string AzuriteAnswers,
    Func<RawAnswer, bool> AzuriteFits,
    int EndpointStatus,
    string EndpointCode,
    string Why);
