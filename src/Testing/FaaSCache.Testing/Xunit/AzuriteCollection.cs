namespace FaaSCache.Testing;

/// <summary>
/// The "Azurite" collection: test classes deriving from <see cref="AzuriteTests"/> (or marked
/// <c>[Collection(AzuriteCollection.Name)]</c>) share one <see cref="AzuriteFixture"/> (take it as a constructor parameter).
/// xunit 2 only reads collection definitions from the test assembly itself, so each test project
/// declares it once:
/// <code>[CollectionDefinition(AzuriteCollection.Name)] public sealed class AzuriteCollectionDefinition : AzuriteCollection;</code>
/// </summary>
[CollectionDefinition(Name)]
public abstract class AzuriteCollection : ICollectionFixture<AzuriteFixture>
{
    public const string Name = "Azurite";
}
