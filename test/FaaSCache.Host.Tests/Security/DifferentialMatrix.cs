namespace FaaSCache.Host.Tests.Security;

/// <summary>
/// The seeded generator of the differential matrix, and the signer of its requests (Shared Key by the REST rules, SAS by
/// the SDK's own builders): the same seed gives the same cases in the same order. This part draws the cases; their requests
/// are built in DifferentialMatrix.Requests.cs and signed in DifferentialMatrix.Signing.cs.
/// </summary>
internal sealed partial class DifferentialMatrix(int seed, DateTimeOffset now)
{
    public const string ServiceVersion = "2025-11-05";
    private const string PermissionLetters = "racwdxlt";

    private static readonly string[] OtherAccounts = ["another", "DEVSTOREACCOUNT1"];

    private readonly Random _random = new(seed);

    public List<MatrixCase> Generate(int count)
    {
        var cases = new List<MatrixCase>(count);
        for (int i = 0; i < count; i++)
        {
            cases.Add(NextCase(i));
        }

        return cases;
    }

    private MatrixCase NextCase(int index)
    {
        var operation = Pick(Enum.GetValues<MatrixOperation>());
        NameShape shape = operation is MatrixOperation.ListBlobs or MatrixOperation.GetContainerProperties
            ? NameShape.Container
            : Weighted((NameShape.Plain, 30), (NameShape.Nested, 15), (NameShape.SpacesAndUnicode, 15),
                (NameShape.DotDotRaw, 6), (NameShape.DotRaw, 5), (NameShape.EmptySegmentRaw, 5), (NameShape.TrailingSlashRaw, 4),
                (NameShape.DotDotEncoded, 6), (NameShape.DotEncoded, 5), (NameShape.EmptySegmentEncoded, 5));
        string account = _random.Next(100) < 88 ? AzuriteServer.AccountName : Pick(OtherAccounts);
        Credential credential = Weighted(
            (Credential.SharedKey, 18), (Credential.SharedKeyJunkSignature, 4), (Credential.SharedKeyOtherAccountName, 3),
            (Credential.SharedKeyStaleDate, 3), (Credential.SharedKeyLiteJunk, 2), (Credential.BearerJunk, 2), (Credential.None, 4),
            (Credential.ServiceSasThisBlob, 16), (Credential.ServiceSasOtherBlob, 4), (Credential.ServiceSasThisContainer, 14),
            (Credential.ServiceSasOtherContainer, 4), (Credential.AccountSas, 22));
        SasTwist twist = Weighted((SasTwist.None, 60), (SasTwist.Expired, 8), (SasTwist.NotYetValid, 8), (SasTwist.HttpsOnly, 8),
            (SasTwist.SourceIpElsewhere, 8), (SasTwist.SourceIpLoopback, 8));

        // Every subset of the eight letters is possible; the empty set and the usual ones come up often enough to matter.
        string permissions = _random.Next(100) switch
        {
            < 6 => string.Empty,
            < 40 => Pick(["r", "w", "c", "d", "t", "l", "rw", "cw", "rl", "a", "x", "racwdxlt"]),
            _ => new string([.. PermissionLetters.Where(_ => _random.Next(2) == 0)]),
        };
        string services = _random.Next(100) < 80 ? Pick(["b", "bf", "bqt"]) : Pick(["f", "qt"]);
        string resourceTypes = Pick(["o", "o", "co", "sco", "c", "s", "sc"]);
        bool exists = operation switch
        {
            MatrixOperation.GetBlob or MatrixOperation.HeadBlob or MatrixOperation.RangedGet or MatrixOperation.PutBlobOverExisting
                or MatrixOperation.DeleteBlob or MatrixOperation.SetBlobMetadata or MatrixOperation.GetBlobTags or MatrixOperation.SetBlobTags => true,
            MatrixOperation.PutBlobIfNoneMatch => _random.Next(2) == 0,
            _ => false,
        };
        return new MatrixCase(index, operation, shape, account, credential, credential is Credential.ServiceSasThisBlob or Credential.ServiceSasOtherBlob
            or Credential.ServiceSasThisContainer or Credential.ServiceSasOtherContainer or Credential.AccountSas ? twist : SasTwist.None,
            permissions, services, resourceTypes, exists);
    }

    private T Pick<T>(IReadOnlyList<T> choices) => choices[_random.Next(choices.Count)];

    private T Weighted<T>(params (T Value, int Weight)[] choices)
    {
        int roll = _random.Next(choices.Sum(c => c.Weight));
        foreach ((T value, int weight) in choices)
        {
            if (roll < weight)
            {
                return value;
            }

            roll -= weight;
        }

        return choices[^1].Value;
    }
}
