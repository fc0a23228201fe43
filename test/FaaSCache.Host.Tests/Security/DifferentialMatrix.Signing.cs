using Azure.Storage;
using Azure.Storage.Sas;

namespace FaaSCache.Host.Tests.Security;

/// <summary>The signatures: Shared Key by the REST rules, SAS by the SDK's own builders (and by hand for the empty sp they refuse).</summary>
internal sealed partial class DifferentialMatrix
{
    private static readonly StorageSharedKeyCredential Key = new(AzuriteServer.AccountName, AzuriteServer.AccountKey);

    /// <summary>
    /// Signs as the Authorize-with-Shared-Key page says (version 2015-02-21 on): the twelve standard header lines, the x-ms-*
    /// headers sorted, then <c>/account</c> + the path as sent + the query parameters, sorted, decoded.
    /// </summary>
    public static RawRequest SignedWithSharedKey(RawRequest request, string account, DateTimeOffset date)
    {
        List<KeyValuePair<string, string>> headers = [.. request.Headers.Select(h => h.Key == "x-ms-date" ? new KeyValuePair<string, string>(h.Key, date.UtcDateTime.ToString("R", CultureInfo.InvariantCulture)) : h)];
        request = request with { Headers = headers };
        string length = request.Header("Content-Length");
        var text = new StringBuilder();
        text.Append(request.Method).Append('\n')
            .Append(request.Header("Content-Encoding")).Append('\n')
            .Append(request.Header("Content-Language")).Append('\n')
            .Append(length == "0" ? "" : length).Append('\n')
            .Append(request.Header("Content-MD5")).Append('\n')
            .Append(request.Header("Content-Type")).Append('\n')
            .Append(request.Header("Date")).Append('\n')
            .Append(request.Header("If-Modified-Since")).Append('\n')
            .Append(request.Header("If-Match")).Append('\n')
            .Append(request.Header("If-None-Match")).Append('\n')
            .Append(request.Header("If-Unmodified-Since")).Append('\n')
            .Append(request.Header("Range")).Append('\n');
        foreach ((string name, string value) in headers.Where(h => h.Key.StartsWith("x-ms-", StringComparison.OrdinalIgnoreCase))
            .Select(h => (Name: h.Key.ToLowerInvariant(), h.Value)).OrderBy(h => h.Name, StringComparer.Ordinal))
        {
            text.Append(name).Append(':').Append(value).Append('\n');
        }

        int question = request.Target.IndexOf('?', StringComparison.Ordinal);
        string path = question < 0 ? request.Target : request.Target[..question];
        text.Append('/').Append(account).Append(path);
        if (question >= 0)
        {
            foreach ((string name, string value) in request.Target[(question + 1)..].Split('&')
                .Select(p => p.Split('=', 2))
                .Select(p => (Name: Uri.UnescapeDataString(p[0]).ToLowerInvariant(), Value: p.Length > 1 ? Uri.UnescapeDataString(p[1]) : ""))
                .OrderBy(p => p.Name, StringComparer.Ordinal))
            {
                text.Append('\n').Append(name).Append(':').Append(value);
            }
        }

        string signature = Convert.ToBase64String(HMACSHA256.HashData(Convert.FromBase64String(AzuriteServer.AccountKey), Encoding.UTF8.GetBytes(text.ToString())));
        return WithAuthorization(request, $"SharedKey {account}:{signature}");
    }

    /// <summary>The SAS query of a case, made by the SDK's builders (and, for the empty permission set they refuse, from their string-to-sign).</summary>
    private string Sas(MatrixCase c)
    {
        (DateTimeOffset starts, DateTimeOffset expires) = c.Twist switch
        {
            SasTwist.Expired => (now.AddHours(-2), now.AddHours(-1)),
            SasTwist.NotYetValid => (now.AddHours(1), now.AddHours(2)),
            _ => (now.AddMinutes(-15), now.AddHours(1)),
        };
        SasProtocol protocol = c.Twist == SasTwist.HttpsOnly ? SasProtocol.Https : SasProtocol.HttpsAndHttp;
        SasIPRange range = c.Twist switch
        {
            SasTwist.SourceIpElsewhere => new SasIPRange(IPAddress.Parse("203.0.113.0"), IPAddress.Parse("203.0.113.255")),
            SasTwist.SourceIpLoopback => new SasIPRange(IPAddress.Loopback),
            _ => default,
        };

        if (c.Credential == Credential.AccountSas)
        {
            var account = new AccountSasBuilder
            {
                StartsOn = starts,
                ExpiresOn = expires,
                Protocol = protocol,
                IPRange = range,
                Services = (c.Services.Contains('b', StringComparison.Ordinal) ? AccountSasServices.Blobs : 0)
                    | (c.Services.Contains('f', StringComparison.Ordinal) ? AccountSasServices.Files : 0)
                    | (c.Services.Contains('q', StringComparison.Ordinal) ? AccountSasServices.Queues : 0)
                    | (c.Services.Contains('t', StringComparison.Ordinal) ? AccountSasServices.Tables : 0),
                ResourceTypes = (c.ResourceTypes.Contains('s', StringComparison.Ordinal) ? AccountSasResourceTypes.Service : 0)
                    | (c.ResourceTypes.Contains('c', StringComparison.Ordinal) ? AccountSasResourceTypes.Container : 0)
                    | (c.ResourceTypes.Contains('o', StringComparison.Ordinal) ? AccountSasResourceTypes.Object : 0),
            };
            account.SetPermissions(c.Permissions.Length > 0 ? c.Permissions : "r");
            string query = account.ToSasQueryParameters(Key, out string stringToSign).ToString();
            return c.Permissions.Length > 0 ? query : WithEmptyPermissions(query, stringToSign, line: 1);
        }

        var blob = new BlobSasBuilder
        {
            BlobContainerName = c.Credential == Credential.ServiceSasOtherContainer ? MatrixCase.OtherContainer : MatrixCase.Container,
            StartsOn = starts,
            ExpiresOn = expires,
            Protocol = protocol,
            IPRange = range,
        };
        if (c.Credential is Credential.ServiceSasThisBlob or Credential.ServiceSasOtherBlob)
        {
            blob.Resource = "b";
            blob.BlobName = c.Credential == Credential.ServiceSasOtherBlob ? $"k{c.Index:D4}-other.txt" : c.IsBlobLevel ? c.BlobName : MatrixCase.SeedBlob;
        }
        else
        {
            blob.Resource = "c";
        }

        blob.SetPermissions(c.Permissions.Length > 0 ? c.Permissions : "r", normalize: false);
        string sas = blob.ToSasQueryParameters(Key, out string signed).ToString();
        return c.Permissions.Length > 0 ? sas : WithEmptyPermissions(sas, signed, line: 0);
    }

    /// <summary>The SDK will not sign an empty sp: sign its own string-to-sign with the sp line emptied instead.</summary>
    private static string WithEmptyPermissions(string query, string stringToSign, int line)
    {
        string[] lines = stringToSign.Split('\n');
        lines[line] = string.Empty;
        string signature = Convert.ToBase64String(HMACSHA256.HashData(Convert.FromBase64String(AzuriteServer.AccountKey), Encoding.UTF8.GetBytes(string.Join('\n', lines))));
        return string.Join('&', query.Split('&').Select(p => p.StartsWith("sp=", StringComparison.Ordinal) ? "sp="
            : p.StartsWith("sig=", StringComparison.Ordinal) ? "sig=" + Uri.EscapeDataString(signature) : p));
    }
}
