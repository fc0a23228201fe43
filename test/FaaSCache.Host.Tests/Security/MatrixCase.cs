namespace FaaSCache.Host.Tests.Security;

/// <summary>How a generated request proves (or fails to prove) who sent it.</summary>
internal enum Credential
{
    SharedKey,
    SharedKeyJunkSignature,
    SharedKeyOtherAccountName,
    SharedKeyStaleDate,
    SharedKeyLiteJunk,
    BearerJunk,
    None,
    ServiceSasThisBlob,
    ServiceSasOtherBlob,
    ServiceSasThisContainer,
    ServiceSasOtherContainer,
    AccountSas,
}

/// <summary>What is wrong with a SAS besides its permissions (one thing at a time, so each answer has one cause).</summary>
internal enum SasTwist
{
    None,
    Expired,
    NotYetValid,
    HttpsOnly,
    SourceIpElsewhere,
    SourceIpLoopback,
}

/// <summary>The operations of the matrix: those the endpoint serves, and a few it forwards.</summary>
internal enum MatrixOperation
{
    GetBlob,
    HeadBlob,
    RangedGet,
    PutBlobNew,
    PutBlobOverExisting,
    PutBlobIfNoneMatch,
    PutBlobOverUncommitted,
    PutBlock,
    PutBlockList,
    DeleteBlob,
    DeleteMissing,
    GetMissing,
    HeadMissing,
    ListBlobs,
    GetContainerProperties,
    SetBlobMetadata,
    GetBlobTags,
    SetBlobTags,
}

/// <summary>How the blob name is written in the request target.</summary>
internal enum NameShape
{
    Plain,
    Nested,
    SpacesAndUnicode,
    DotDotRaw,
    DotRaw,
    EmptySegmentRaw,
    TrailingSlashRaw,
    DotDotEncoded,
    DotEncoded,
    EmptySegmentEncoded,
    /// <summary>A container-level operation: no blob name.</summary>
    Container,
}

/// <summary>One generated request: what it does, to what, for which account, with which credential.</summary>
internal sealed record MatrixCase(
    int Index,
    MatrixOperation Operation,
    NameShape Shape,
    string Account,
    Credential Credential,
    SasTwist Twist,
    string Permissions,
    string Services,
    string ResourceTypes,
    bool TargetExists)
{
    public const string Container = "matrix";
    public const string OtherContainer = "other";
    public const string SeedBlob = "seed.txt";

    public bool ForOwnAccount => Account == AzuriteServer.AccountName;

    public bool IsSas => Credential is Credential.ServiceSasThisBlob or Credential.ServiceSasOtherBlob
        or Credential.ServiceSasThisContainer or Credential.ServiceSasOtherContainer or Credential.AccountSas;

    /// <summary>A SAS signed for the resource the request names (the others fail their signature).</summary>
    public bool SasSignedForTarget => Credential is Credential.ServiceSasThisBlob or Credential.ServiceSasThisContainer or Credential.AccountSas;

    public bool IsBlobLevel => Operation is not (MatrixOperation.ListBlobs or MatrixOperation.GetContainerProperties);

    /// <summary>The endpoint serves it through the cache (and checks a SAS itself); everything else it forwards.</summary>
    public bool EndpointServes => Operation is MatrixOperation.GetBlob or MatrixOperation.HeadBlob or MatrixOperation.RangedGet
        or MatrixOperation.PutBlobNew or MatrixOperation.PutBlobOverExisting or MatrixOperation.PutBlobIfNoneMatch
        or MatrixOperation.PutBlobOverUncommitted or MatrixOperation.PutBlock or MatrixOperation.PutBlockList
        or MatrixOperation.DeleteBlob or MatrixOperation.DeleteMissing or MatrixOperation.GetMissing or MatrixOperation.HeadMissing;

    public bool HasDotOrEmptySegment => Shape is NameShape.DotDotRaw or NameShape.DotRaw or NameShape.EmptySegmentRaw
        or NameShape.TrailingSlashRaw or NameShape.DotDotEncoded or NameShape.DotEncoded or NameShape.EmptySegmentEncoded;

    /// <summary>Whether setup requests can give the blob to both stores (the endpoint refuses dot names; other accounts have no blobs).</summary>
    public bool CanSetUp => ForOwnAccount && !HasDotOrEmptySegment;

    private string Prefix => $"k{Index:D4}";

    /// <summary>The blob name as storage reads it (decoded), or empty for a container-level request.</summary>
    public string BlobName => Shape switch
    {
        NameShape.Plain => $"{Prefix}.txt",
        NameShape.Nested => $"{Prefix}/a/b/c.txt",
        NameShape.SpacesAndUnicode => $"{Prefix} sp é ü 日本.txt",
        NameShape.DotDotRaw or NameShape.DotDotEncoded => $"{Prefix}/a/../b.txt",
        NameShape.DotRaw or NameShape.DotEncoded => $"{Prefix}/./b.txt",
        NameShape.EmptySegmentRaw or NameShape.EmptySegmentEncoded => $"{Prefix}//b.txt",
        NameShape.TrailingSlashRaw => $"{Prefix}/",
        _ => string.Empty,
    };

    /// <summary>The blob name as it is written in the target.</summary>
    public string RawBlobPath => Shape switch
    {
        NameShape.Plain or NameShape.Nested or NameShape.SpacesAndUnicode => string.Join('/', BlobName.Split('/').Select(Uri.EscapeDataString)),
        NameShape.DotDotEncoded => $"{Prefix}/a/%2E%2E/b.txt",
        NameShape.DotEncoded => $"{Prefix}/%2E/b.txt",
        NameShape.EmptySegmentEncoded => $"{Prefix}%2F%2Fb.txt",
        _ => BlobName,
    };

    public override string ToString() =>
        $"#{Index} {Operation} {Shape} /{Account} {Credential}{(IsSas ? $" sp='{Permissions}' twist={Twist}" : "")}{(Credential == Credential.AccountSas ? $" ss={Services} srt={ResourceTypes}" : "")}";
}

/// <summary>A request to send to both, with why it is sent: a setup step of a case, or the case itself.</summary>
internal sealed record Exchange(MatrixCase Case, bool IsSetup, string Step, RawRequest Request);
