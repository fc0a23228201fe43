using FaaSCache.Security.Keys;

namespace FaaSCache.Host.Tests.Security;

/// <summary>The key stores as the Functions host lays them out, and their errors.</summary>
[Trait("Category", "Unit")]
public sealed class KeyStoreTests
{
    [Fact]
    public void The_files_store_makes_the_functions_hosts_files_owner_only_and_reads_keys_added_by_hand()
    {
        using var folder = new TempFolder("faascache-keys-");
        string secrets = Path.Combine(folder.Path, "secrets");
        var store = new FileKeyStore(secrets);

        HostKeys keys = store.GetHostKeys();
        IReadOnlyDictionary<string, string> function = store.GetFunctionKeys("MyFunction");
        string system = store.EnsureSystemKey("blobs_extension")!;

        Assert.Equal(56, keys.MasterKey.Length);
        Assert.Equal(["default"], keys.FunctionKeys.Keys);
        Assert.Equal(["default"], function.Keys);
        Assert.True(File.Exists(Path.Combine(secrets, "myfunction.json")));
        Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute, File.GetUnixFileMode(secrets));
        Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(Path.Combine(secrets, "host.json")));
        Assert.Equal(system, store.GetHostKeys().SystemKeys["blobs_extension"]);
        Assert.Equal(keys.MasterKey, store.GetHostKeys().MasterKey);

        HostKeyFiles.WriteFunctionKeys(secrets, "MyFunction", new Dictionary<string, string> { ["default"] = "one", ["ci"] = "two" });
        File.SetLastWriteTimeUtc(Path.Combine(secrets, "myfunction.json"), DateTime.UtcNow.AddSeconds(5));
        Assert.Equal(["default", "ci"], store.GetFunctionKeys("MyFunction").Keys);
    }

    [Fact]
    public void A_broken_key_file_and_an_unsupported_store_are_one_message_each_naming_what_to_do()
    {
        using var folder = new TempFolder("faascache-keys-");
        File.WriteAllText(Path.Combine(folder.Path, "host.json"), "{ not json");

        KeyStoreException broken = Assert.Throws<KeyStoreException>(() => new FileKeyStore(folder.Path).GetHostKeys());
        KeyStoreException vault = Assert.Throws<KeyStoreException>(() => KeyStores.Create(n => n == KeyStores.StorageTypeSetting ? "keyvault" : null, folder.Path));
        KeyStoreException api = Assert.Throws<KeyStoreException>(() => KeyStores.Create(n => n switch { KeyStores.StorageTypeSetting => "kubernetes", "AzureWebJobsKubernetesSecretName" => "secrets/k", _ => null }, folder.Path));

        Assert.Contains(Path.Combine(folder.Path, "host.json"), broken.Message, StringComparison.Ordinal);
        Assert.Contains("delete it to have new keys made", broken.Message, StringComparison.Ordinal);
        Assert.Contains("keyvault is not supported", vault.Message, StringComparison.Ordinal);
        Assert.Contains("mount the keys Secret at /run/secrets/functions-keys", api.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void A_mounted_secret_gives_the_functions_hosts_kubernetes_names_and_refuses_to_start_without_a_master_key()
    {
        using var folder = new TempFolder("faascache-keys-");
        File.WriteAllText(Path.Combine(folder.Path, "host.function.default"), "hostkey\n");
        File.WriteAllText(Path.Combine(folder.Path, "host.systemKey.blobs_extension"), "systemkey");
        File.WriteAllText(Path.Combine(folder.Path, "functions.thumbnail.default"), "fnkey");
        IKeyStore store = KeyStores.Create(n => n switch { KeyStores.StorageTypeSetting => "Kubernetes", KeyStores.MountedSecretPathSetting => folder.Path, _ => null }, "/app");

        Assert.Contains("host.master", Assert.Throws<KeyStoreException>(store.GetHostKeys).Message, StringComparison.Ordinal);

        File.WriteAllText(Path.Combine(folder.Path, "host.master"), "masterkey");
        HostKeys keys = store.GetHostKeys();
        Assert.Equal(("masterkey", "hostkey", "systemkey"), (keys.MasterKey, keys.FunctionKeys["default"], keys.SystemKeys["blobs_extension"]));
        Assert.Equal("fnkey", store.GetFunctionKeys("Thumbnail")["default"]);
        Assert.Empty(store.GetFunctionKeys("Other"));
    }
}
